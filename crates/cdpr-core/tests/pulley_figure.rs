//! The issue's figure for pulleys (and, once cable mass is in the statics, sag): how many mm
//! the pulley wrap changes the cable lengths along seed 000's trajectory on uvigo8, and how far
//! the platform lands from its target when a controller that knows only point exits commands
//! uvigo8-pulleys; and the same for the sag of uvigo8-pulleys' 2.5 g/m cables (the rest
//! lengths that hold each pose with sagging cables against massless ones, and where the
//! platform settles when a controller ignores the sag). A measurement, not a check (the checks
//! are the kinematics and catenary tests), hence ignored; it prints the figures quoted in the
//! README:
//!
//! ```sh
//! cargo test --release -p cdpr-core --test pulley_figure -- --ignored --nocapture
//! ```

use cdpr_core::kinematics::{self, Pose};
use cdpr_core::robot::Robot;
use cdpr_core::statics::{EquilibriumOptions, elastic_equilibrium, pretensioned_rest_lengths};
use cdpr_core::trajectory::{BuiltinOptions, builtin};

/// uvigo8-pulleys with massless cables: the pulley's effect alone.
fn pulleys_only() -> Robot {
    let mut robot = cdpr_core::fixtures::robot("uvigo8-pulleys");
    for c in &mut robot.cables {
        c.mass_per_length = 0.0;
    }
    robot
}

fn pose_error(target: &Pose, reached: &Pose) -> (f64, f64) {
    let dp = (reached.position - target.position).norm();
    let dr = (reached.rpy - target.rpy).norm();
    (dp, dr)
}

#[test]
#[ignore = "a measurement: prints the pulley figure"]
fn pulley_wrap_on_seed000() {
    let point = cdpr_core::fixtures::robot("uvigo8");
    let pulley = pulleys_only();
    let options = BuiltinOptions {
        speed: 0.1,
        dt: 0.05,
        ..BuiltinOptions::default()
    };
    let trajectory = builtin(&point, "seed000", &options).expect("seed000 on uvigo8");
    let m = point.cable_count();
    let mut dl_min = vec![f64::INFINITY; m];
    let mut dl_max = vec![f64::NEG_INFINITY; m];
    let (mut wrap_min, mut wrap_max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut worst_dp, mut worst_dr, mut sum_dp) = (0.0f64, 0.0f64, 0.0);
    let (mut base_dp, mut n) = (0.0f64, 0usize);
    for s in &trajectory.samples {
        let ik_point = kinematics::inverse(&point, &s.pose);
        let ik_pulley = kinematics::inverse(&pulley, &s.pose);
        for (k, (a, b)) in ik_point.cables.iter().zip(&ik_pulley.cables).enumerate() {
            let dl = (b.length - a.length) * 1e3;
            dl_min[k] = dl_min[k].min(dl);
            dl_max[k] = dl_max[k].max(dl);
            let wrap = b
                .pulley
                .expect("every cable has a pulley")
                .wrap
                .to_degrees();
            wrap_min = wrap_min.min(wrap);
            wrap_max = wrap_max.max(wrap);
        }
        // A controller that knows only point exits pre-tensions its cables for uvigo8 and
        // commands those rest lengths; the robot with pulleys settles where they balance.
        let (rest, _) = pretensioned_rest_lengths(&point, &s.pose, point.tension)
            .expect("seed000 is wrench-feasible on uvigo8");
        let eq = |robot: &Robot| {
            elastic_equilibrium(
                robot,
                &rest,
                &EquilibriumOptions {
                    guess: Some(s.pose),
                    ..EquilibriumOptions::default()
                },
            )
            .expect("an equilibrium near the target")
        };
        let (dp, dr) = pose_error(&s.pose, &eq(&pulley).pose);
        let (bp, _) = pose_error(&s.pose, &eq(&point).pose);
        worst_dp = worst_dp.max(dp);
        worst_dr = worst_dr.max(dr);
        base_dp = base_dp.max(bp);
        sum_dp += dp;
        n += 1;
    }
    println!("seed000 at 0.1 m/s on uvigo8 vs uvigo8-pulleys (r = 25 mm), {n} poses every 50 ms");
    println!();
    println!("| cable | length with pulley − point exit, mm (min … max) |");
    println!("|---|---|");
    for k in 0..m {
        println!(
            "| {} | {:+.2} … {:+.2} |",
            point.cables[k].name, dl_min[k], dl_max[k]
        );
    }
    println!();
    println!("wrap β over the trajectory: {wrap_min:.1}° … {wrap_max:.1}°");
    println!(
        "platform commanded with point-exit rest lengths, settled on the pulley robot: \
         position error max {:.2} mm, mean {:.2} mm; orientation error max {:.2} mrad \
         (same commands on uvigo8 itself: {:.1e} mm)",
        worst_dp * 1e3,
        sum_dp / n as f64 * 1e3,
        worst_dr * 1e3,
        base_dp * 1e3
    );
}

#[test]
#[ignore = "a measurement: prints the sag figure"]
fn sag_on_seed000() {
    use cdpr_core::statics::heavy::{catenary_rest_lengths, heavy_equilibrium};
    let heavy = cdpr_core::fixtures::robot("uvigo8-pulleys");
    let light = pulleys_only();
    let options = BuiltinOptions {
        speed: 0.1,
        dt: 0.05,
        ..BuiltinOptions::default()
    };
    let trajectory = builtin(&heavy, "seed000", &options).expect("seed000 on uvigo8-pulleys");
    let (mut dl_min, mut dl_max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut sag_min, mut sag_max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut worst_dp, mut worst_dr, mut sum_dp, mut n) = (0.0f64, 0.0f64, 0.0, 0usize);
    for s in &trajectory.samples {
        let h = catenary_rest_lengths(&heavy, &s.pose, heavy.tension).expect("holds, sagging");
        let l = catenary_rest_lengths(&light, &s.pose, light.tension).expect("holds");
        for (a, b) in h.rest_lengths.iter().zip(&l.rest_lengths) {
            let dl = (a - b) * 1e3;
            dl_min = dl_min.min(dl);
            dl_max = dl_max.max(dl);
        }
        for sag in &h.sags {
            sag_min = sag_min.min(sag * 1e3);
            sag_max = sag_max.max(sag * 1e3);
        }
        // A controller that ignores the sag commands the massless cables' rest lengths.
        let eq = heavy_equilibrium(
            &heavy,
            &l.rest_lengths,
            &EquilibriumOptions {
                guess: Some(s.pose),
                ..EquilibriumOptions::default()
            },
        )
        .expect("an equilibrium near the target");
        let (dp, dr) = pose_error(&s.pose, &eq.pose);
        worst_dp = worst_dp.max(dp);
        worst_dr = worst_dr.max(dr);
        sum_dp += dp;
        n += 1;
    }
    println!(
        "seed000 at 0.1 m/s on uvigo8-pulleys, 2.5 g/m cables against massless ones, {n} poses"
    );
    println!("sag below the chord: {sag_min:.3} … {sag_max:.3} mm");
    println!("rest lengths, sagging − massless: {dl_min:+.4} … {dl_max:+.4} mm");
    println!(
        "platform commanded with the massless rest lengths, settled with sagging cables: \
         position error max {:.4} mm, mean {:.4} mm; orientation error max {:.4} mrad",
        worst_dp * 1e3,
        sum_dp / n as f64 * 1e3,
        worst_dr * 1e3
    );
}
