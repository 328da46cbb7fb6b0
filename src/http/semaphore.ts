// At most `size` holders at once; the rest wait in arrival order.
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  /** Resolves with the release function once a slot is free; call it exactly once. */
  async acquire(): Promise<() => void> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next(); // the slot passes straight to the next waiter
      else this.active--;
    };
  }
}
