import { createMetrics } from '@iam/platform';
import { webhookMetrics } from './metrics';

describe('webhook gauges', () => {
  it('are measured when /metrics is scraped, once per scrape, a failed measure keeping the last values', async () => {
    const registry = createMetrics({ defaultMetrics: false });
    const m = webhookMetrics(registry);
    let calls = 0;
    let fail = false;
    const undo = m.measureOnScrape(async () => {
      calls++;
      if (fail) throw new Error('database down');
      m.queueAge.set(12);
      m.pending.set(3);
      m.deadLetters.set(1);
    });
    expect(calls).toBe(0); // nothing measured at rest
    const first = await registry.registry.metrics();
    expect(calls).toBe(1);
    expect(first).toMatch(/^webhook_queue_age_seconds 12$/m);
    expect(first).toMatch(/^webhook_messages_pending 3$/m);
    expect(first).toMatch(/^webhook_dead_letters 1$/m);
    fail = true;
    const second = await registry.registry.metrics();
    expect(calls).toBe(2);
    expect(second).toMatch(/^webhook_messages_pending 3$/m);
    undo();
    await registry.registry.metrics();
    expect(calls).toBe(2);
  });
});
