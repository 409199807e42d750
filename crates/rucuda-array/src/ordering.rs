//! Ordering an operation after the arrays it uses: an operation runs on one stream, and
//! its arrays may live on others (their home streams, where they were allocated and are
//! freed). [`before_on`] joins those streams into the operation's, [`after_on`] joins it
//! back, so that a stream-ordered free on a home stream cannot overtake the operation.

use rucuda_driver::{Event, EventFlags, Stream};

use crate::error::Result;

/// Orders work across streams for an operation that runs on `run_on` and uses arrays
/// whose home streams are `homes`: before it, `run_on` waits for each other home stream;
/// [`after_on`] then makes each other home stream wait for `run_on`, so that a
/// stream-ordered free on a home stream cannot overtake the operation. Free when every
/// stream is the same (the common case: one comparison per array).
pub(crate) fn before_on(run_on: &Stream, homes: &[&Stream]) -> Result<()> {
    for h in homes {
        if h.raw() != run_on.raw() {
            let ev = Event::new(run_on.context(), EventFlags::DISABLE_TIMING)?;
            ev.record(h)?;
            run_on.wait_event(&ev)?;
        }
    }
    Ok(())
}

/// See [`before_on`].
pub(crate) fn after_on(run_on: &Stream, homes: &[&Stream]) -> Result<()> {
    let mut ev: Option<Event> = None;
    for h in homes {
        if h.raw() != run_on.raw() {
            if ev.is_none() {
                let e = Event::new(run_on.context(), EventFlags::DISABLE_TIMING)?;
                e.record(run_on)?;
                ev = Some(e);
            }
            if let Some(e) = &ev {
                h.wait_event(e)?;
            }
        }
    }
    Ok(())
}
