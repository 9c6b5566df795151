//! A tiny glTF writer for the importer tests: binary data goes into one
//! base64 data-URI buffer (or a GLB's binary chunk), accessors are added
//! one call each, and `json` / `glb` wrap a caller's nodes, meshes, skins
//! and animations into a whole document.

use super::base64;

#[derive(Default)]
pub struct Doc {
    /// The binary buffer (views 4-byte aligned).
    pub bin: Vec<u8>,
    /// `bufferViews` entries, JSON.
    pub views: Vec<String>,
    /// `accessors` entries, JSON.
    pub accessors: Vec<String>,
}

impl Doc {
    pub fn view(&mut self, bytes: &[u8]) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#,
            self.bin.len(),
            bytes.len()
        ));
        self.bin.extend_from_slice(bytes);
        self.views.len() - 1
    }

    pub fn raw(
        &mut self,
        bytes: &[u8],
        component: u32,
        ty: &str,
        count: usize,
        extra: &str,
    ) -> usize {
        let v = self.view(bytes);
        self.accessors.push(format!(
            r#"{{"bufferView":{v},"componentType":{component},"count":{count},"type":"{ty}"{extra}}}"#
        ));
        self.accessors.len() - 1
    }

    pub fn f32s(&mut self, data: &[f32], ty: &str) -> usize {
        let width = match ty {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => unreachable!(),
        };
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        let extra = if ty == "VEC3" {
            // POSITION wants min/max; harmless elsewhere.
            let mut mn = [f32::MAX; 3];
            let mut mx = [f32::MIN; 3];
            for c in data.chunks(3) {
                for i in 0..3 {
                    mn[i] = mn[i].min(c[i]);
                    mx[i] = mx[i].max(c[i]);
                }
            }
            format!(r#","min":{mn:?},"max":{mx:?}"#)
        } else {
            String::new()
        };
        self.raw(&bytes, 5126, ty, data.len() / width, &extra)
    }

    pub fn u8s(&mut self, data: &[u8], ty: &str, normalized: bool) -> usize {
        let width = if ty == "VEC4" { 4 } else { 1 };
        let extra = if normalized {
            r#","normalized":true"#
        } else {
            ""
        };
        self.raw(data, 5121, ty, data.len() / width, extra)
    }

    pub fn u16s(&mut self, data: &[u16], ty: &str) -> usize {
        let width = if ty == "VEC4" { 4 } else { 1 };
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.raw(&bytes, 5123, ty, data.len() / width, "")
    }

    /// The whole document; `body` holds the remaining top-level members
    /// (nodes, skins, animations, meshes), without surrounding braces.
    pub fn json(&self, body: &str) -> String {
        format!(
            r#"{{"asset":{{"version":"2.0"}},
"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}],
"bufferViews":[{}],
"accessors":[{}],
{body}}}"#,
            self.bin.len(),
            base64(&self.bin),
            self.views.join(","),
            self.accessors.join(",")
        )
    }

    /// The document as GLB: JSON chunk plus the buffer as the binary chunk.
    pub fn glb(&self, body: &str) -> Vec<u8> {
        let mut json = format!(
            r#"{{"asset":{{"version":"2.0"}},
"buffers":[{{"byteLength":{}}}],
"bufferViews":[{}],
"accessors":[{}],
{body}}}"#,
            self.bin.len(),
            self.views.join(","),
            self.accessors.join(",")
        )
        .into_bytes();
        while !json.len().is_multiple_of(4) {
            json.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + json.len() + 8 + bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }

    /// A VEC3 float accessor of `count` elements without a buffer view (all
    /// zeros) but for the sparse `values` at the increasing `indices`.
    pub fn sparse_vec3(&mut self, count: usize, indices: &[u16], values: &[f32]) -> usize {
        let ib: Vec<u8> = indices.iter().flat_map(|v| v.to_le_bytes()).collect();
        let vb: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let iv = self.view(&ib);
        let vv = self.view(&vb);
        self.accessors.push(format!(
            r#"{{"componentType":5126,"count":{count},"type":"VEC3","sparse":{{"count":{},"indices":{{"bufferView":{iv},"componentType":5123}},"values":{{"bufferView":{vv}}}}}}}"#,
            indices.len()
        ));
        self.accessors.len() - 1
    }

    /// A VEC3 float accessor of `count` zeros (no buffer view).
    pub fn zeros_vec3(&mut self, count: usize) -> usize {
        self.accessors.push(format!(
            r#"{{"componentType":5126,"count":{count},"type":"VEC3"}}"#
        ));
        self.accessors.len() - 1
    }
}
