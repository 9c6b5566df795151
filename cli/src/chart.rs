//! The words on every PNG the tool writes: titles, axis names with units,
//! tick values and legends with text.
//!
//! Charts are drawn by plotters on an RGB buffer; the skeleton and mesh
//! pictures of [`crate::render`] are drawn by tiny-skia and pasted into such
//! a buffer, which then gets its title, time axis and legend from plotters.
//! Text is rasterised from a font embedded in the binary (Ubuntu Light from
//! `epaint_default_fonts`), so no system fonts or fontconfig are needed and
//! every machine draws the same pixels. PNG encoding is tiny-skia's.

use std::error::Error as StdError;
use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use tiny_skia::{IntSize, Pixmap};

type Res<T> = Result<T, Box<dyn StdError>>;

/// A plotters drawing area on the tool's RGB canvas.
pub type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Background of every picture.
pub const BACKGROUND: RGBColor = RGBColor(252, 252, 250);
/// Colour of text, axes and ticks.
pub const INK: RGBColor = RGBColor(40, 40, 40);
/// Font family every text style names; [`canvas`] registers it.
pub const FONT: &str = "sans-serif";

/// Registers the embedded font under [`FONT`] once per process, for the
/// tick values plotters writes.
fn fonts() -> Res<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("the embedded font does not load".into())
    }
}

/// A `width` x `height` picture: `images` pasted at their top-left corners,
/// then `draw` adds text and charts with plotters.
///
/// # Errors
/// A size of zero or over 16384 pixels a side, an image that does not fit,
/// or a drawing error.
pub fn canvas(
    width: u32,
    height: u32,
    images: &[(&Pixmap, (u32, u32))],
    draw: impl FnOnce(&Area<'_>) -> Res<()>,
) -> Res<Pixmap> {
    fonts()?;
    if !(1..=16384).contains(&width) || !(1..=16384).contains(&height) {
        return Err(format!("bad image size {width}x{height}").into());
    }
    let (w, h) = (width as usize, height as usize);
    let mut rgb = [BACKGROUND.0, BACKGROUND.1, BACKGROUND.2].repeat(w * h);
    for &(image, (x0, y0)) in images {
        let (iw, ih) = (image.width() as usize, image.height() as usize);
        let (x0, y0) = (x0 as usize, y0 as usize);
        if x0 + iw > w || y0 + ih > h {
            return Err("an image does not fit its canvas".into());
        }
        for (row, src) in image.pixels().chunks_exact(iw).enumerate() {
            let start = ((y0 + row) * w + x0) * 3;
            for (dst, p) in rgb[start..start + iw * 3].chunks_exact_mut(3).zip(src) {
                let c = p.demultiply();
                dst.copy_from_slice(&[c.red(), c.green(), c.blue()]);
            }
        }
    }
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        draw(&root)?;
        root.present()?;
    }
    let rgba: Vec<u8> = rgb
        .chunks_exact(3)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    let size = IntSize::from_wh(width, height).ok_or("bad image size")?;
    Ok(Pixmap::from_vec(rgba, size).ok_or("bad image buffer")?)
}

/// One legend entry: its text, colour and whether its line is dashed.
#[derive(Clone, Copy, Debug)]
pub struct Key<'a> {
    /// What the line shows.
    pub text: &'a str,
    /// Line colour.
    pub colour: RGBColor,
    /// Dashed (a source clip) or solid.
    pub dashed: bool,
}

/// Draws `keys` as a legend: a short line in each key's colour and its text,
/// one entry under the other from `(x, y)`, `size` pixels high text.
///
/// # Errors
/// A drawing error.
pub fn legend(area: &Area<'_>, keys: &[Key<'_>], (x, y): (i32, i32), size: u32) -> Res<()> {
    let step = (size as f32 * 1.5).round() as i32;
    let swatch = 2 * size as i32;
    for (i, k) in keys.iter().enumerate() {
        let ky = y + i as i32 * step;
        let mid = ky + size as i32 / 2;
        let style = k.colour.stroke_width(3);
        if k.dashed {
            let dash = swatch / 4;
            for s in [0, 2] {
                area.draw(&PathElement::new(
                    vec![(x + s * dash, mid), (x + (s + 1) * dash, mid)],
                    style,
                ))?;
            }
        } else {
            area.draw(&PathElement::new(vec![(x, mid), (x + swatch, mid)], style))?;
        }
        text(area, k.text, (x + swatch + size as i32 / 2, ky), size)?;
    }
    Ok(())
}

/// The embedded font, parsed once.
fn face() -> Res<&'static FontRef<'static>> {
    static FACE: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FACE.get_or_init(|| FontRef::try_from_slice(epaint_default_fonts::UBUNTU_LIGHT).ok())
        .as_ref()
        .ok_or_else(|| "the embedded font does not load".into())
}

/// Lays `text` out at `size` pixels with kerning and each glyph's side
/// bearings, and calls `pixel(x, y, coverage)` with `x` from the start of the
/// line and `y` from its top. Returns the line's width.
fn raster(text: &str, size: u32, mut pixel: impl FnMut(i32, i32, f32)) -> Res<i32> {
    let font = face()?.as_scaled(PxScale::from(size as f32));
    let (mut pen, mut prev) = (0.0f32, None);
    for ch in text.chars() {
        let id = font.glyph_id(ch);
        if let Some(p) = prev {
            pen += font.kern(p, id);
        }
        let glyph = id.with_scale_and_position(size as f32, point(pen, font.ascent()));
        if let Some(outline) = font.outline_glyph(glyph) {
            let b = outline.px_bounds();
            outline.draw(|x, y, c| pixel(b.min.x as i32 + x as i32, b.min.y as i32 + y as i32, c));
        }
        pen += font.h_advance(id);
        prev = Some(id);
    }
    Ok(pen.ceil() as i32)
}

/// Width of `text` in pixels at `size`.
fn text_width(text: &str, size: u32) -> Res<i32> {
    raster(text, size, |_, _, _| {})
}

/// Inks `text` onto `area`, each glyph pixel at `place(x, y)` of its
/// position in the line (see [`raster`]).
fn ink(area: &Area<'_>, text: &str, size: u32, place: impl Fn(i32, i32) -> (i32, i32)) -> Res<()> {
    let mut result = Ok(());
    raster(text, size, |gx, gy, c| {
        if result.is_ok() {
            result = area.draw_pixel(place(gx, gy), &INK.mix(f64::from(c.min(1.0))));
        }
    })?;
    Ok(result?)
}

/// Writes `text` with its top-left corner at `(x, y)` of `area`.
///
/// # Errors
/// A drawing error.
pub fn text(area: &Area<'_>, text: &str, (x, y): (i32, i32), size: u32) -> Res<()> {
    ink(area, text, size, |gx, gy| (x + gx, y + gy))
}

/// Writes `text` centred on `x`, its top at `y`.
///
/// # Errors
/// A drawing error.
pub fn text_centred(area: &Area<'_>, text: &str, (x, y): (i32, i32), size: u32) -> Res<()> {
    let w = text_width(text, size)?;
    self::text(area, text, (x - w / 2, y), size)
}

/// Writes `text` upwards (turned a quarter left), centred on `y`, its top at `x`.
///
/// # Errors
/// A drawing error.
pub fn text_up(area: &Area<'_>, text: &str, (x, y): (i32, i32), size: u32) -> Res<()> {
    let w = text_width(text, size)?;
    ink(area, text, size, |gx, gy| (x + gy, y + w / 2 - gx))
}

/// Colours the filmstrip draws the character's left side, right side and
/// centre line in (the mid shade of each, see [`crate::render`]).
pub const SIDE_KEYS: [Key<'static>; 3] = [
    Key {
        text: "left side",
        colour: RGBColor(230, 120, 40),
        dashed: false,
    },
    Key {
        text: "right side",
        colour: RGBColor(40, 120, 220),
        dashed: false,
    },
    Key {
        text: "spine and head",
        colour: RGBColor(60, 60, 80),
        dashed: false,
    },
];

/// A filmstrip with its words: `title` and the side legend above, and under
/// the cells a clip-time axis with each cell's time (`times`, seconds) as a
/// tick value.
///
/// # Errors
/// A cell count that does not match `times`, or a drawing error.
pub fn label_filmstrip(strip: &Pixmap, title: &str, times: &[f32]) -> Res<Pixmap> {
    if times.is_empty() {
        return Err("a filmstrip needs at least one cell time".into());
    }
    let cell = strip.width() / times.len() as u32;
    let size = (cell / 6).clamp(10, 16);
    let header = 2 * size + 12;
    let footer = 3 * size + 16;
    let (w, h) = (strip.width(), header + strip.height() + footer);
    canvas(w, h, &[(strip, (0, header))], |root| {
        draw_strip_words(root, title, times, cell, (header, strip.height()), size)
    })
}

/// The words of [`label_filmstrip`] on a canvas whose strip starts at
/// `top` and is `height` pixels high.
fn draw_strip_words(
    root: &Area<'_>,
    title: &str,
    times: &[f32],
    cell: u32,
    (top, height): (u32, u32),
    size: u32,
) -> Res<()> {
    let w = root.dim_in_pixel().0 as i32;
    text(root, title, (8, 8), size + 4)?;
    // The side legend in one row at the right of the header.
    let mut x = w - 8;
    for k in SIDE_KEYS.iter().rev() {
        let width = 2 * size as i32 + size as i32 / 2 + text_width(k.text, size)?;
        x -= width + size as i32;
        legend(root, std::slice::from_ref(k), (x, 8), size)?;
    }
    // The time axis: a line, a tick under each cell's centre, its time, the axis name.
    let axis = (top + height + 2) as i32;
    root.draw(&PathElement::new(
        vec![(4, axis), (w - 4, axis)],
        INK.stroke_width(1),
    ))?;
    for (i, t) in times.iter().enumerate() {
        let cx = (i as u32 * cell + cell / 2) as i32;
        root.draw(&PathElement::new(
            vec![(cx, axis), (cx, axis + 5)],
            INK.stroke_width(1),
        ))?;
        text_centred(root, &format!("{t:.2}"), (cx, axis + 7), size)?;
    }
    text_centred(
        root,
        "clip time (s)",
        (w / 2, axis + 9 + size as i32 + 2),
        size,
    )
}

/// One curve of a [`line_chart`]: its key and `(x, y)` points.
pub struct Curve<'a> {
    /// Legend entry and line style.
    pub key: Key<'a>,
    /// Points in chart units.
    pub points: Vec<(f32, f32)>,
    /// Line width in pixels.
    pub width: u32,
}

/// Axis names and ranges of a [`line_chart`].
pub struct Axes<'a> {
    /// Chart title.
    pub title: &'a str,
    /// Horizontal axis name with its unit.
    pub x_name: &'a str,
    /// Vertical axis name with its unit.
    pub y_name: &'a str,
    /// Horizontal range.
    pub x: std::ops::Range<f32>,
    /// Vertical range.
    pub y: std::ops::Range<f32>,
    /// Decimals of the horizontal and vertical tick values.
    pub decimals: (usize, usize),
}

/// Points and short segments drawn over a [`line_chart_with_marks`]: the
/// keys of a keyframe curve (dots) and its tangents (segments).
pub struct Marks<'a> {
    /// Legend entry and colour.
    pub key: Key<'a>,
    /// Dots, in chart units.
    pub points: Vec<(f32, f32)>,
    /// Segments from one end to the other, in chart units.
    pub segments: Vec<[(f32, f32); 2]>,
}

/// A line chart on `area`: title, axes with names and tick values, a light
/// grid, `curves` (dashed ones on top), and a legend with each
/// curve's text to the right of the plot.
///
/// # Errors
/// An empty range or a drawing error.
pub fn line_chart(area: &Area<'_>, axes: &Axes<'_>, curves: &[Curve<'_>]) -> Res<()> {
    line_chart_with_marks(area, axes, curves, &[])
}

/// [`line_chart`] with `marks` drawn over the curves (segments 2 pixels
/// wide, dots of radius 4) and named in the legend after them.
///
/// # Errors
/// An empty range or a drawing error.
pub fn line_chart_with_marks(
    area: &Area<'_>,
    axes: &Axes<'_>,
    curves: &[Curve<'_>],
    marks: &[Marks<'_>],
) -> Res<()> {
    let size = 15;
    let keys: Vec<Key<'_>> = curves
        .iter()
        .map(|c| c.key)
        .chain(marks.iter().map(|m| m.key))
        .collect();
    let mut legend_w = 0;
    for k in &keys {
        legend_w = legend_w.max(text_width(k.text, size)?);
    }
    legend_w += 3 * size as i32 + 16;
    let (plot, side) = area.split_horizontally(area.dim_in_pixel().0 as i32 - legend_w);
    let title = size + 5;
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .margin_top(2 * title)
        .x_label_area_size(2 * size + 18)
        .y_label_area_size(3 * size + 18)
        .build_cartesian_2d(axes.x.clone(), axes.y.clone())?;
    // Titles and axis names in the embedded font (see `raster`); the tick
    // values are digits, which plotters places well.
    let (px, py) = chart.plotting_area().get_pixel_range();
    let (ax, ay) = area.get_pixel_range();
    let (px, py) = (
        px.start - ax.start..px.end - ax.start,
        py.start - ay.start..py.end - ay.start,
    );
    text_centred(area, axes.title, ((px.start + px.end) / 2, 8), title)?;
    text_centred(
        area,
        axes.x_name,
        ((px.start + px.end) / 2, py.end + size as i32 + 10),
        size,
    )?;
    text_up(area, axes.y_name, (4, (py.start + py.end) / 2), size)?;
    chart
        .configure_mesh()
        .label_style((FONT, size - 2).into_font().color(&INK))
        .axis_style(INK)
        .bold_line_style(RGBColor(222, 222, 218))
        .light_line_style(RGBColor(240, 240, 236))
        .x_label_formatter(&|v| format!("{v:.*}", axes.decimals.0))
        .y_label_formatter(&|v| format!("{v:.*}", axes.decimals.1))
        .draw()?;
    // Solid lines first, the thin dashed ones (source clips) on top so they stay visible.
    let order = curves
        .iter()
        .filter(|c| !c.key.dashed)
        .chain(curves.iter().filter(|c| c.key.dashed));
    for c in order {
        let style = c.key.colour.stroke_width(c.width);
        if c.key.dashed {
            chart.draw_series(DashedLineSeries::new(c.points.iter().copied(), 6, 4, style))?;
        } else {
            chart.draw_series(LineSeries::new(c.points.iter().copied(), style))?;
        }
    }
    for m in marks {
        let line = m.key.colour.stroke_width(2);
        chart.draw_series(
            m.segments
                .iter()
                .map(|s| PathElement::new(s.to_vec(), line)),
        )?;
        let dot = m.key.colour.filled();
        chart.draw_series(m.points.iter().map(|&p| Circle::new(p, 4, dot)))?;
    }
    legend(&side, &keys, (8, 2 * size as i32 + 20), size)
}

/// Clip times of a filmstrip's `cells` cells over a clip of `duration`
/// seconds: evenly over `[0, duration)`, as [`crate::render::filmstrip`] samples them.
#[must_use]
pub fn cell_times(duration: f32, cells: usize) -> Vec<f32> {
    let cells = cells.max(1);
    (0..cells)
        .map(|i| duration * i as f32 / cells as f32)
        .collect()
}

/// Side-by-side panels (e.g. the skinning methods of
/// [`crate::render::skinned_mesh`]) with `title` above and each panel's
/// caption under it.
///
/// # Errors
/// No caption, or a drawing error.
pub fn label_panels(panels: &Pixmap, title: &str, captions: &[&str]) -> Res<Pixmap> {
    if captions.is_empty() {
        return Err("panels need captions".into());
    }
    let panel = panels.width() / captions.len() as u32;
    let size = (panel / 24).clamp(11, 18);
    let header = 2 * size + 8;
    let footer = 2 * size;
    let (w, h) = (panels.width(), header + panels.height() + footer);
    canvas(w, h, &[(panels, (0, header))], |root| {
        text(root, title, (8, 6), size + 2)?;
        for (i, c) in captions.iter().enumerate() {
            let cx = (i as u32 * panel + panel / 2) as i32;
            text_centred(root, c, (cx, (header + panels.height() + 4) as i32), size)?;
        }
        Ok(())
    })
}
