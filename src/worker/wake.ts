/** Runs `pass` when woken, up to `parallel` passes at once, and never loses a wake-up: a wake-up
 * while all are busy makes one of them pass once more, and a drain that ends after a wake-up it did
 * not see (it had made its last check but not yet left the set, which it does in a callback: a pass
 * may finish without awaiting anything) starts another. Without that last check a wake-up can be
 * lost until the next poll (test/worker/wake.test.ts: 32 of 3,000 interleavings). */
export function wakeable(parallel: number, pass: () => Promise<void>): {
  wake: () => void; stop: () => void; running: () => Promise<void>[];
} {
  const drains = new Set<Promise<void>>();
  let wanted = false;
  let stopped = false;
  const drain = async () => {
    while (wanted && !stopped) {
      wanted = false;
      await pass();
    }
  };
  const wake = () => {
    wanted = true;
    if (stopped || drains.size >= parallel) return;
    const d: Promise<void> = drain().finally(() => {
      drains.delete(d);
      if (wanted) wake();
    });
    drains.add(d);
  };
  return { wake, stop: () => { stopped = true; }, running: () => [...drains] };
}
