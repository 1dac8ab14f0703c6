use cdpr::kinematics::{self, Pose};
use cdpr::robot::Robot;
use nalgebra::{Matrix3, Matrix6};
fn main() {
    for name in ["uvigo8", "silva4", "caroca"] {
        let robot = Robot::builtin(name).unwrap().unwrap();
        let pose = Pose::from_array(robot.home);
        let (rest, _) =
            cdpr::statics::pretensioned_rest_lengths(&robot, &pose, robot.tension).unwrap();
        // Potential U(q) with q = (x, y, z, rotation vector about the origin).
        let u = |q: &[f64; 6]| {
            let p = Pose::new(
                pose.position.x + q[0],
                pose.position.y + q[1],
                pose.position.z + q[2],
                q[3],
                q[4],
                q[5],
            );
            let l = kinematics::lengths(&robot, &p);
            let mut e = 0.0;
            for ((li, l0), c) in l.iter().zip(&rest).zip(&robot.cables) {
                let s = (li - l0).max(0.0);
                e += 0.5 * c.stiffness_at(*l0) * s * s;
            }
            let com = p.rotation() * robot.platform.com + p.position;
            e + robot.platform.mass * 9.81 * com.z
        };
        let h = 1e-5;
        let mut k = Matrix6::zeros();
        for i in 0..6 {
            for j in 0..6 {
                let mut q = [0.0; 6];
                let f = |di: f64, dj: f64| {
                    let mut q2 = q;
                    q2[i] += di;
                    q2[j] += dj;
                    u(&q2)
                };
                k[(i, j)] = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4.0 * h * h);
                q[0] = 0.0;
            }
        }
        let m = robot.platform.mass;
        let c = robot.platform.com;
        let cx = Matrix3::new(0.0, -c.z, c.y, c.z, 0.0, -c.x, -c.y, c.x, 0.0);
        let mut mm = Matrix6::zeros();
        mm.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(Matrix3::identity() * m));
        mm.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-cx * m));
        mm.fixed_view_mut::<3, 3>(3, 0).copy_from(&(cx * m));
        mm.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(robot.platform.inertia + cx.transpose() * cx * m));
        let l = mm.cholesky().unwrap().l();
        let li = l.try_inverse().unwrap();
        let a = li * k * li.transpose();
        let ev = a.symmetric_eigenvalues();
        let mut w: Vec<f64> = ev.iter().map(|x| x.max(0.0).sqrt()).collect();
        w.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{name}: modal ω (rad/s) {:?}",
            w.iter().map(|x| x.round()).collect::<Vec<_>>()
        );
    }
}
