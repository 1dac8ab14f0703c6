//! Real-time scheduling for the threads that keep time: the shadow's cycle, the virtual PLC's
//! tasks and the server threads that answer its clients.
//!
//! A desktop scheduler lets CPU-bound processes delay a thread that wakes by up to its tick
//! (4 ms at HZ = 250): at a 1 ms PLC task, four PLC cycles between a sample and its echo. These
//! threads work a few hundred microseconds a cycle and sleep in between, so they can run under
//! SCHED_FIFO (Linux; ros2_control's controller manager runs its loop so) without starving
//! anything — the kernel keeps 5 % of every second for the others anyway. Where the system
//! refuses (no CAP_SYS_NICE, `ulimit -r` 0) or is not Linux, they run at normal priority and
//! [`Scheduling::Normal`] says why.

use serde::Serialize;
use std::fmt;

/// The SCHED_FIFO priorities asked for (1–99): above ordinary processes and below the kernel's
/// own real-time threads (interrupt threads run at 50 on PREEMPT_RT; the ones that feed the
/// network card should not wait for a shadow). Each kind of thread has its own: two threads
/// of one FIFO priority on one core wait for each other (neither preempts the other), and the
/// PLC's task must not wait for a connection, nor a connection for the shadow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The virtual PLC's tasks (NC and PLC).
    PlcTask = 45,
    /// A virtual PLC's connections: reading requests, writing replies and notifications.
    Connection = 43,
    /// The shadow's cycle.
    Shadow = 40,
}

/// How a thread ended up being scheduled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "scheduling")]
pub enum Scheduling {
    /// SCHED_FIFO at this priority.
    Realtime { priority: u8 },
    /// Normal priority: not asked for, or refused (why).
    Normal { why: String },
}

impl fmt::Display for Scheduling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scheduling::Realtime { priority } => write!(f, "real-time (SCHED_FIFO {priority})"),
            Scheduling::Normal { why } => write!(f, "normal priority ({why})"),
        }
    }
}

/// Asks for SCHED_FIFO at `role`'s priority for the calling thread when `wanted`; what it got.
pub fn prefer_current_thread(wanted: bool, role: Role) -> Scheduling {
    if !wanted {
        return Scheduling::Normal {
            why: "not asked for: --no-realtime".into(),
        };
    }
    raise(role as u8)
}

#[cfg(target_os = "linux")]
fn raise(level: u8) -> Scheduling {
    use thread_priority::{
        RealtimeThreadSchedulePolicy, ThreadPriority, ThreadPriorityValue, ThreadSchedulePolicy,
        set_thread_priority_and_policy, thread_native_id,
    };
    let priority = match ThreadPriorityValue::try_from(level) {
        Ok(p) => ThreadPriority::Crossplatform(p),
        Err(e) => return Scheduling::Normal { why: e },
    };
    let policy = ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo);
    match set_thread_priority_and_policy(thread_native_id(), priority, policy) {
        Ok(()) => {
            pin_to_last_cpu();
            Scheduling::Realtime { priority: level }
        }
        Err(e) => Scheduling::Normal {
            why: format!(
                "SCHED_FIFO refused: {e:?}; allow it with `ulimit -r 99` or CAP_SYS_NICE \
                 (setcap cap_sys_nice+ep on the binary)"
            ),
        },
    }
}

/// Keeps the calling thread on the last CPU it may run on, where every thread that keeps
/// time goes (the shadow's and a virtual PLC's alike): a real-time thread woken from another
/// core wakes on an idle one if there is one, and an idle virtual CPU takes up to a millisecond
/// to come back (measured on this project's CI machines: cycles of 0.2 ms took 1 ms, quiet);
/// on one core the waker is running when the woken thread is due.
#[cfg(target_os = "linux")]
fn pin_to_last_cpu() {
    use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
    use nix::unistd::Pid;
    let Ok(allowed) = sched_getaffinity(Pid::from_raw(0)) else {
        return;
    };
    let Some(last) = (0..CpuSet::count())
        .rev()
        .find(|&c| allowed.is_set(c).unwrap_or(false))
    else {
        return;
    };
    let mut one = CpuSet::new();
    if one.set(last).is_ok() {
        let _ = sched_setaffinity(Pid::from_raw(0), &one);
    }
}

#[cfg(not(target_os = "linux"))]
fn raise(_level: u8) -> Scheduling {
    Scheduling::Normal {
        why: "real-time scheduling is asked for on Linux only".into(),
    }
}
