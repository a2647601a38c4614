/**
 * Runs jobs in arrival order with at most `limit` in flight, as Ferry bounds its deliveries
 * (FERRY_DELIVERY_CONCURRENCY, 512 by default). Jobs added in one event-loop turn start together in the next.
 */
export function deliveryPump<J>(limit: number, run: (job: J) => Promise<void>): (job: J) => void {
  const queue: J[] = [];
  let inFlight = 0;
  let scheduled = false;
  const pump = (): void => {
    scheduled = false;
    while (inFlight < limit && queue.length > 0) {
      inFlight++;
      void run(queue.shift()!).finally(() => {
        inFlight--;
        pump();
      });
    }
  };
  return (job) => {
    queue.push(job);
    if (!scheduled) {
      scheduled = true;
      setImmediate(pump);
    }
  };
}
