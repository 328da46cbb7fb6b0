// The fan-out's wake-ups (src/worker/wake.ts): however the passes and the wake-ups interleave, a
// pass starts after every wake-up; a lost one would leave events for the next poll.
import t from 'tap';
import { wakeable } from '../../src/worker/wake.ts';

/** Resolves after `n` turns of the microtask queue (0: at once, synchronously awaited). */
const turns = async (n: number) => { for (let i = 0; i < n; i++) await undefined; };

/** A small deterministic generator, so that a failure can be replayed from its seed. */
function random(seed: number) {
  let s = seed >>> 0;
  return (n: number) => { s = (s * 1664525 + 1013904223) >>> 0; return s % n; };
}

t.test('a pass starts after every wake-up, whatever the interleaving', async (t) => {
  let lost = 0;
  const trials = 3000;
  for (let seed = 1; seed <= trials; seed++) {
    const r = random(seed);
    let clock = 0;
    let lastWake = -1;
    let lastPassStart = -1;
    const w = wakeable(1 + r(2), async () => {
      lastPassStart = ++clock;
      // A pass that finishes at once or after some turns, as a claim that finds nothing or awaits.
      await turns(r(4));
    });
    const wakes: Promise<void>[] = [];
    for (let i = 0; i < 6; i++) {
      // Wake-ups from other tasks, each after its own number of turns.
      wakes.push(turns(r(12)).then(() => { lastWake = ++clock; w.wake(); }));
    }
    await Promise.all(wakes);
    // Let every pass and every drain's exit run out.
    for (let i = 0; i < 100 && w.running().length; i++) await Promise.all(w.running());
    if (lastPassStart < lastWake) lost++;
  }
  t.equal(lost, 0, `in ${trials} interleavings, no wake-up is left without a pass after it`);
});

t.test('at most `parallel` passes at once; a wake-up while they run makes one pass again', async (t) => {
  let open = 0;
  let most = 0;
  let passes = 0;
  const gates: (() => void)[] = [];
  const w = wakeable(2, async () => {
    passes++;
    most = Math.max(most, ++open);
    await new Promise<void>((r) => gates.push(r));
    open--;
  });
  for (let i = 0; i < 5; i++) w.wake();
  t.equal(passes, 2, 'two passes start');
  while (gates.length) { gates.shift()!(); await turns(5); }
  await Promise.all(w.running());
  t.equal(most, 2, 'never more than two at once');
  t.equal(passes, 3, 'the wake-ups during the first two make one more pass, not three');
});

t.test('stopped: no pass starts', async (t) => {
  let passes = 0;
  const w = wakeable(2, async () => { passes++; });
  w.stop();
  w.wake();
  await turns(3);
  t.equal(passes, 0);
});
