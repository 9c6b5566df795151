//! The scalar twin of [`super::retarget`]: one target joint at a time,
//! the readable specification the SIMD kernel is tested against.

use super::{check_sizes, write_root, RetargetMap};
use crate::error::Error;
use crate::math::Quat;
use crate::soa::{get_joint, SoaTransform};

/// Retargets one source pose joint by joint; same contract and errors as
/// [`super::retarget`].
///
/// # Errors
/// [`Error::BadLength`] for `"source pose"` or `"output pose"`.
pub fn retarget(
    map: &RetargetMap<'_>,
    source: &[SoaTransform],
    output: &mut [SoaTransform],
) -> Result<(), Error> {
    check_sizes(map, source, output)?;
    for (b, out) in output.iter_mut().enumerate() {
        let Some(rest) = map.rest().get(b) else {
            *out = SoaTransform::IDENTITY;
            continue;
        };
        *out = *rest;
        for l in 0..4 {
            let j = b * 4 + l;
            if !map.is_mapped(j) {
                continue;
            }
            let mut acc = Quat::IDENTITY;
            for s in map.path(j) {
                acc = acc * get_joint(source, s).map_or(Quat::IDENTITY, |t| t.rotation);
            }
            let pre = map.pre().get(b).map_or(Quat::IDENTITY, |q| q.get(l));
            let post = map.post().get(b).map_or(Quat::IDENTITY, |q| q.get(l));
            out.rotation.set(l, (pre * acc * post).normalize());
        }
    }
    write_root(map, source, output);
    Ok(())
}
