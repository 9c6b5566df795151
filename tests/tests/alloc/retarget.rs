//! Retargeting at run time: the lane kernel and its scalar twin over the
//! humanoid's walk, onto a copy of the humanoid with longer legs.

use sinew_core::clip::TimeMode;
use sinew_core::retarget::{self, reference, MapOptions};
use sinew_core::SoaTransform;
use sinew_std::retarget::OwnedMap;
use sinew_std::Humanoid;

use crate::frames_allocate_nothing;

pub fn retarget_allocates_nothing() {
    let h = Humanoid::default_rate();
    let s = h.skeleton.view();
    let options = MapOptions {
        align_rest_directions: true,
        ..MapOptions::default()
    };
    let map = OwnedMap::build(&s, &s, &[], &options).expect("map");
    let view = map.view().expect("view");
    let clip = h.clips[0].view();
    let mut source = vec![SoaTransform::IDENTITY; s.soa_count()];
    let mut out = vec![SoaTransform::IDENTITY; s.soa_count()];
    frames_allocate_nothing("retarget kernel and scalar twin", 300, |i| {
        clip.sample(i as f32 / 60.0, TimeMode::Loop, &mut source)?;
        retarget::retarget(&view, &source, &mut out)?;
        let a = out[1].rotation.w.as_array()[0];
        reference::retarget(&view, &source, &mut out)?;
        Ok::<f32, sinew_core::Error>(a + out[1].rotation.w.as_array()[0])
    });
}
