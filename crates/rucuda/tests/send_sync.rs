//! The types the guide says may cross threads do (a compile-time check; no GPU needed).

use rucuda::driver::{Context, DeviceBuffer, Event, Function, Module, PinnedHostBuffer, Stream};
use rucuda::tools::{
    AutoContext, DeviceMemoryPool, PageLockedMemoryPool, PooledDeviceAllocation,
    PooledHostAllocation,
};

fn send_sync<T: Send + Sync>() {}

#[test]
fn shared_types_are_send_and_sync() {
    send_sync::<Context>();
    send_sync::<Stream>();
    send_sync::<Event>();
    send_sync::<Module>();
    send_sync::<Function>();
    send_sync::<DeviceBuffer<f32>>();
    send_sync::<PinnedHostBuffer<f32>>();
    send_sync::<AutoContext>();
    send_sync::<DeviceMemoryPool>();
    send_sync::<PooledDeviceAllocation>();
    send_sync::<PageLockedMemoryPool>();
    send_sync::<PooledHostAllocation<f64>>();
}
