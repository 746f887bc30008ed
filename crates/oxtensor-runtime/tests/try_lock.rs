//! The per-call state lock (`oxtensor_runtime::TryLock`): one holder at a time, and each
//! holder sees the last one's writes.

use oxtensor_runtime::TryLock;

#[test]
fn a_held_lock_refuses_a_second_holder_until_dropped() {
    let lock = TryLock::new(1);
    let mut held = lock.try_lock().expect("free at first");
    *held += 1;
    assert!(lock.try_lock().is_none());
    drop(held);
    assert_eq!(*lock.try_lock().expect("free again"), 2);
}

#[test]
fn threads_each_see_the_last_holders_writes() {
    let lock = TryLock::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut done = 0;
                while done < 1000 {
                    if let Some(mut v) = lock.try_lock() {
                        *v += 1;
                        done += 1;
                    }
                }
            });
        }
    });
    assert_eq!(*lock.try_lock().expect("free"), 4000);
}
