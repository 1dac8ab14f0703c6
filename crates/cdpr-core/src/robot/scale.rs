//! Numbers in the wrong unit: a pose or a trajectory in millimetres (or any position far beyond
//! the robot) is refused early, with how far it is, rather than met later by "no static
//! equilibrium" or a slack-cable warning.

use super::Robot;
use nalgebra::Vector3;

/// How many frame sizes from the frame box a position may lie before it is refused as
/// "millimetres?". A position typed in millimetres lies ~1000× farther out than meant, hundreds
/// of frame sizes away for any point inside the frame; a pose deliberately outside the frame
/// (`cdpr ik` or `tensions` explored around a robot, a keops pose above its base) stays within a
/// few frame sizes. Ten sits more than an order of magnitude from both.
pub const FAR_FRAME_SIZES: f64 = 10.0;

/// Smallest frame size the rule uses, m: a tiny robot's poses are not refused at a few
/// centimetres.
pub const MIN_FRAME_SIZE_M: f64 = 0.1;

/// A position far outside the robot's frame: probably not in metres.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{distance:.0} m away from {robot}'s frame ({frame_size:.2} m across): millimetres? the \
     robot file is in metres"
)]
pub struct FarAway {
    pub robot: String,
    /// The position, m (as given).
    pub position: [f64; 3],
    /// Distance from the frame box, m.
    pub distance: f64,
    /// Largest edge of the frame box, m.
    pub frame_size: f64,
}

impl Robot {
    /// `Some` when `position` lies more than [`FAR_FRAME_SIZES`] frame sizes outside the frame
    /// box (see there for why).
    pub fn far_away(&self, position: &Vector3<f64>) -> Option<FarAway> {
        let size = self.frame.size().amax().max(MIN_FRAME_SIZE_M);
        let outside = (self.frame.min - position)
            .sup(&(position - self.frame.max))
            .sup(&Vector3::zeros());
        let distance = outside.norm();
        (distance > FAR_FRAME_SIZES * size).then(|| FarAway {
            robot: self.name.clone(),
            position: [position.x, position.y, position.z],
            distance,
            frame_size: self.frame.size().amax(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::fixtures::robot;
    use nalgebra::Vector3;

    #[test]
    fn a_pose_in_millimetres_is_far_away_and_says_so() {
        let uvigo8 = robot("uvigo8");
        // Frame z ∈ [0, 0.85] m, 2.9 m across: 150 "m" up is 149.15 m above it.
        let far = uvigo8
            .far_away(&Vector3::new(0.0, 0.0, 150.0))
            .expect("far away");
        assert!((far.distance - 149.15).abs() < 1e-9, "{far:?}");
        assert!((far.frame_size - 2.9).abs() < 1e-12);
        let text = far.to_string();
        assert!(
            text.starts_with("149 m away from uvigo8's frame (2.90 m across)"),
            "{text}"
        );
        assert!(
            text.ends_with("millimetres? the robot file is in metres"),
            "{text}"
        );
        // Every point of the workspace, typed in millimetres, is refused.
        let (lo, hi) = (uvigo8.workspace.min, uvigo8.workspace.max);
        for corner in [lo, hi, Vector3::new(lo.x, hi.y, lo.z)] {
            assert!(uvigo8.far_away(&(corner * 1e3)).is_some(), "{corner}");
        }
        // Inside, or a few frame sizes out, is not.
        for p in [[0.0, 0.0, 0.15], [0.0, 0.0, -5.0], [20.0, 0.0, 0.5]] {
            assert!(uvigo8.far_away(&Vector3::from(p)).is_none(), "{p:?}");
        }
        // The boundary: 10 frame sizes beyond the box's x face.
        let edge = 1.45 + 10.0 * 2.9;
        assert!(
            uvigo8
                .far_away(&Vector3::new(edge - 1e-9, 0.0, 0.5))
                .is_none()
        );
        assert!(
            uvigo8
                .far_away(&Vector3::new(edge + 1e-9, 0.0, 0.5))
                .is_some()
        );
        // keops (0.77 m across): 5 m above its base is allowed (a test pose).
        assert!(
            robot("keops")
                .far_away(&Vector3::new(0.0, 0.0, 5.0))
                .is_none()
        );
    }
}
