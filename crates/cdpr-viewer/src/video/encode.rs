//! A clip's writers: an animated GIF in pure Rust (one palette, each frame the rectangle that
//! changed) and an MP4 through ffmpeg; and the frames' shrinking.

use super::{FFMPEG_MISSING, VideoFormat, ffmpeg_on_path};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

/// A clip's writer.
pub(super) enum Encoder {
    Gif(Box<GifClip>),
    Mp4(FfmpegClip),
}

impl Encoder {
    pub(super) fn create(
        path: &Path,
        format: VideoFormat,
        width: u32,
        height: u32,
        fps: u32,
        first: &[u8],
    ) -> Result<Encoder, String> {
        Ok(match format {
            VideoFormat::Gif => {
                Encoder::Gif(Box::new(GifClip::create(path, width, height, first)?))
            }
            VideoFormat::Mp4 => Encoder::Mp4(FfmpegClip::start(path, width, height, fps)?),
        })
    }

    pub(super) fn push(
        &mut self,
        width: u32,
        height: u32,
        rgb: &[u8],
        delay_cs: u16,
    ) -> Result<(), String> {
        match self {
            Encoder::Gif(gif) => gif.push(width, height, rgb, delay_cs),
            Encoder::Mp4(mp4) => mp4.push(width, height, rgb),
        }
    }

    pub(super) fn finish(self) -> Result<(), String> {
        match self {
            Encoder::Gif(gif) => gif.finish(),
            Encoder::Mp4(mp4) => mp4.finish(),
        }
    }
}

/// Colours NeuQuant picks from the first frame; the rest of the 256 are the tension scale's.
const LEARNED_COLORS: usize = 240;
/// Bits kept per channel when looking a colour up (a 2^18-entry table).
const LOOKUP_BITS: u32 = 6;

/// An animated GIF with one palette and frames stored as the rectangle that changed.
pub struct GifClip {
    encoder: gif::Encoder<BufWriter<std::fs::File>>,
    width: u32,
    height: u32,
    /// RGB, 256 entries.
    palette: Vec<[u8; 3]>,
    /// Palette index of each colour at [`LOOKUP_BITS`] per channel; `u16::MAX`: not yet.
    lookup: Vec<u16>,
    previous: Option<Vec<u8>>,
}

impl GifClip {
    /// Creates `path` for frames of `width × height`; the palette is learned from `first`
    /// (RGB).
    pub fn create(path: &Path, width: u32, height: u32, first: &[u8]) -> Result<GifClip, String> {
        let (w, h) = (
            u16::try_from(width).map_err(|_| format!("{width} px is too wide for a GIF"))?,
            u16::try_from(height).map_err(|_| format!("{height} px is too tall for a GIF"))?,
        );
        check_frame(width, height, first)?;
        let rgba: Vec<u8> = first
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        let learned = color_quant::NeuQuant::new(10, LEARNED_COLORS, &rgba).color_map_rgb();
        let mut palette: Vec<[u8; 3]> = learned
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let scale = 256 - palette.len();
        for k in 0..scale {
            let [r, g, b] = cdpr_core::colors::scale_color(k as f64 / (scale - 1).max(1) as f64);
            let byte = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
            palette.push([byte(r), byte(g), byte(b)]);
        }
        let flat: Vec<u8> = palette.iter().flatten().copied().collect();
        let file = std::fs::File::create(path).map_err(|e| format!("cannot create it: {e}"))?;
        let mut encoder =
            gif::Encoder::new(BufWriter::new(file), w, h, &flat).map_err(|e| e.to_string())?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(|e| e.to_string())?;
        Ok(GifClip {
            encoder,
            width,
            height,
            palette,
            lookup: vec![u16::MAX; 1 << (3 * LOOKUP_BITS)],
            previous: None,
        })
    }

    /// The palette index drawn for an RGB colour: the nearest palette colour to the centre of
    /// its lookup cell.
    fn index_of(&mut self, r: u8, g: u8, b: u8) -> u8 {
        let drop = 8 - LOOKUP_BITS;
        let key = ((r as usize >> drop) << (2 * LOOKUP_BITS))
            | ((g as usize >> drop) << LOOKUP_BITS)
            | (b as usize >> drop);
        let known = self.lookup[key];
        if known != u16::MAX {
            return known as u8;
        }
        let centre = |v: u8| ((v >> drop) << drop) as i32 + (1 << drop) / 2;
        let (r, g, b) = (centre(r), centre(g), centre(b));
        let nearest = self
            .palette
            .iter()
            .enumerate()
            .min_by_key(|(_, c)| {
                let d = |a: u8, v: i32| (a as i32 - v).pow(2);
                d(c[0], r) + d(c[1], g) + d(c[2], b)
            })
            .map_or(0, |(k, _)| k);
        self.lookup[key] = nearest as u16;
        nearest as u8
    }

    /// Adds a frame (RGB) shown for `delay_cs` hundredths of a second.
    pub fn push(
        &mut self,
        width: u32,
        height: u32,
        rgb: &[u8],
        delay_cs: u16,
    ) -> Result<(), String> {
        if (width, height) != (self.width, self.height) {
            return Err(format!(
                "a frame of {width}×{height} px in a clip of {}×{} px (the window was resized)",
                self.width, self.height
            ));
        }
        check_frame(width, height, rgb)?;
        let indices: Vec<u8> = rgb
            .chunks_exact(3)
            .map(|p| self.index_of(p[0], p[1], p[2]))
            .collect();
        let (w, h) = (width as usize, height as usize);
        // The rectangle that changed; a frame like the one before is stored as one pixel
        // (every frame of the clip is a frame of the GIF: its count and timing stay).
        let (left, top, right, bottom) = match &self.previous {
            None => (0, 0, w, h),
            Some(before) => changed_rect(before, &indices, w).unwrap_or((0, 0, 1, 1)),
        };
        let mut buffer = Vec::with_capacity((right - left) * (bottom - top));
        for y in top..bottom {
            buffer.extend_from_slice(&indices[y * w + left..y * w + right]);
        }
        let frame = gif::Frame {
            delay: delay_cs,
            dispose: gif::DisposalMethod::Keep,
            left: left as u16,
            top: top as u16,
            width: (right - left) as u16,
            height: (bottom - top) as u16,
            buffer: std::borrow::Cow::Owned(buffer),
            ..gif::Frame::default()
        };
        self.encoder
            .write_frame(&frame)
            .map_err(|e| format!("writing a frame: {e}"))?;
        self.previous = Some(indices);
        Ok(())
    }

    /// Writes the trailer and flushes the file.
    pub fn finish(self) -> Result<(), String> {
        let writer = self
            .encoder
            .into_inner()
            .map_err(|e| format!("finishing the GIF: {e}"))?;
        writer
            .into_inner()
            .map_err(|e| format!("finishing the GIF: {}", e.error()))?
            .sync_all()
            .map_err(|e| format!("finishing the GIF: {e}"))
    }
}

/// An RGB frame `factor` times smaller: each pixel the mean of a `factor × factor` block (the
/// last row and column of blocks dropped when the size is not a multiple). A clip rendered
/// large and shrunk has smooth edges and its overlays' text at a fraction of the picture.
pub fn shrink(width: u32, height: u32, rgb: &[u8], factor: u32) -> (u32, u32, Vec<u8>) {
    if factor <= 1 || width < factor || height < factor {
        return (width, height, rgb.to_vec());
    }
    let (w, h, f) = (width as usize, height as usize, factor as usize);
    let (small_w, small_h) = (w / f, h / f);
    let mut out = Vec::with_capacity(small_w * small_h * 3);
    let area = (f * f) as u32;
    for y in 0..small_h {
        for x in 0..small_w {
            let mut sum = [0u32; 3];
            for dy in 0..f {
                let row = ((y * f + dy) * w + x * f) * 3;
                for p in rgb[row..row + 3 * f].chunks_exact(3) {
                    for c in 0..3 {
                        sum[c] += p[c] as u32;
                    }
                }
            }
            out.extend(sum.map(|v| ((v + area / 2) / area) as u8));
        }
    }
    (small_w as u32, small_h as u32, out)
}

fn check_frame(width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
    if rgb.len() != width as usize * height as usize * 3 || width == 0 || height == 0 {
        return Err(format!(
            "a frame of {} bytes is not {width}×{height} RGB",
            rgb.len()
        ));
    }
    Ok(())
}

/// The smallest rectangle (left, top, right, bottom; exclusive) holding every pixel that
/// differs between two frames of width `w`; `None` when none does.
fn changed_rect(before: &[u8], after: &[u8], w: usize) -> Option<(usize, usize, usize, usize)> {
    let mut rect: Option<(usize, usize, usize, usize)> = None;
    for (y, (a, b)) in before
        .chunks_exact(w)
        .zip(after.chunks_exact(w))
        .enumerate()
    {
        let Some(first) = a.iter().zip(b).position(|(p, q)| p != q) else {
            continue;
        };
        let last = w - a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .position(|(p, q)| p != q)
            .unwrap_or(0);
        rect = Some(match rect {
            None => (first, y, last, y + 1),
            Some((l, t, r, _)) => (l.min(first), t, r.max(last), y + 1),
        });
    }
    rect
}

/// An MP4 written by ffmpeg from raw RGB frames on its standard input.
pub(super) struct FfmpegClip {
    child: Child,
    stdin: Option<ChildStdin>,
    width: u32,
    height: u32,
}

impl FfmpegClip {
    fn start(path: &Path, width: u32, height: u32, fps: u32) -> Result<FfmpegClip, String> {
        let ffmpeg = ffmpeg_on_path().ok_or_else(|| FFMPEG_MISSING.to_string())?;
        let mut child = Command::new(ffmpeg)
            .args(["-hide_banner", "-loglevel", "error", "-y"])
            .args(["-f", "rawvideo", "-pix_fmt", "rgb24"])
            .args(["-s", &format!("{width}x{height}")])
            .args(["-framerate", &fps.to_string()])
            .args(["-i", "-"])
            // H.264 in yuv420p (what every player and slide program reads) needs even sides.
            .args(["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"])
            .args(["-pix_fmt", "yuv420p", "-movflags", "+faststart"])
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("ffmpeg does not start: {e}"))?;
        let stdin = child.stdin.take();
        Ok(FfmpegClip {
            child,
            stdin,
            width,
            height,
        })
    }

    fn push(&mut self, width: u32, height: u32, rgb: &[u8]) -> Result<(), String> {
        if (width, height) != (self.width, self.height) {
            return Err(format!(
                "a frame of {width}×{height} px in a clip of {}×{} px (the window was resized)",
                self.width, self.height
            ));
        }
        check_frame(width, height, rgb)?;
        let Some(stdin) = &mut self.stdin else {
            return Err("ffmpeg's input is closed".into());
        };
        stdin
            .write_all(rgb)
            .map_err(|e| format!("ffmpeg stopped taking frames: {e}"))
    }

    fn finish(mut self) -> Result<(), String> {
        drop(self.stdin.take());
        let output = self
            .child
            .wait_with_output()
            .map_err(|e| format!("waiting for ffmpeg: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "ffmpeg failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video::Clip;

    #[test]
    fn shrinking_averages_blocks() {
        // 4×2 pixels, shrunk twice: two pixels, the means of their 2×2 blocks.
        let rgb: Vec<u8> = [
            [0, 0, 0],
            [100, 0, 0],
            [10, 10, 10],
            [20, 20, 20],
            [0, 0, 0],
            [100, 0, 0],
            [30, 30, 30],
            [41, 40, 40],
        ]
        .concat();
        let (w, h, small) = shrink(4, 2, &rgb, 2);
        assert_eq!((w, h), (2, 1));
        assert_eq!(small, [50, 0, 0, 25, 25, 25]);
        assert_eq!(shrink(4, 2, &rgb, 1).2, rgb);
    }

    /// A GIF written frame by frame decodes back (the `gif` crate's decoder) to the frames'
    /// size, count and delays, with the moving square where it was drawn.
    #[test]
    fn a_gif_clip_decodes_back_frame_by_frame() {
        let (w, h) = (64u32, 48u32);
        let frame = |k: u32| {
            let mut rgb = vec![20u8; (w * h * 3) as usize];
            for y in 10..20 {
                for x in (5 + 8 * k)..(15 + 8 * k) {
                    let at = ((y * w + x) * 3) as usize;
                    rgb[at..at + 3].copy_from_slice(&[230, 60, 40]);
                }
            }
            rgb
        };
        let path = std::env::temp_dir().join(format!("cdpr-video-{}.gif", std::process::id()));
        let clip = Clip::new(0.0, 0.5, 10).expect("a clip");
        let mut gif = GifClip::create(&path, w, h, &frame(0)).expect("creates");
        for k in 0..clip.frames {
            gif.push(w, h, &frame(k), clip.delay_cs(k)).expect("frame");
        }
        // A frame like the one before still counts.
        gif.push(w, h, &frame(4), 10).expect("frame");
        gif.finish().expect("finishes");

        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::RGBA);
        let file = std::fs::File::open(&path).expect("opens");
        let mut decoder = options.read_info(file).expect("a GIF");
        assert_eq!((decoder.width(), decoder.height()), (w as u16, h as u16));
        let mut canvas = vec![0u8; (w * h * 4) as usize];
        let mut frames = 0;
        while let Some(f) = decoder.read_next_frame().expect("a frame") {
            assert_eq!(f.delay, 10);
            // Composite the frame's rectangle onto the canvas (dispose: keep).
            for y in 0..f.height as usize {
                for x in 0..f.width as usize {
                    let src = (y * f.width as usize + x) * 4;
                    let dst = ((f.top as usize + y) * w as usize + f.left as usize + x) * 4;
                    canvas[dst..dst + 4].copy_from_slice(&f.buffer[src..src + 4]);
                }
            }
            let k = frames.min(4);
            let at = |x: u32, y: u32| {
                let i = ((y * w + x) * 4) as usize;
                [canvas[i], canvas[i + 1], canvas[i + 2]]
            };
            let red = at(10 + 8 * k, 15);
            assert!(red[0] > 200 && red[1] < 90, "frame {frames}: {red:?}");
            let background = at(60, 40);
            assert!(
                background.iter().all(|&c| c.abs_diff(20) <= 4),
                "{background:?}"
            );
            frames += 1;
        }
        assert_eq!(frames, clip.frames + 1);
        let _ = std::fs::remove_file(&path);
    }
}
