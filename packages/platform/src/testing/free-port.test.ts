import { createServer } from 'node:net';
import { freePort } from './free-port';

describe('freePort', () => {
  it('lets the kernel choose without a range', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
  });

  it('draws from the range it is given, below the ephemeral ones', async () => {
    const port = await freePort([21_000, 21_999]);
    expect(port).toBeGreaterThanOrEqual(21_000);
    expect(port).toBeLessThanOrEqual(21_999);
  });

  it('says so when every port of the range is taken', async () => {
    const holder = createServer();
    const taken = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => {
      const address = holder.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    }));
    try {
      await expect(freePort([taken, taken])).rejects.toThrow(/no free port/);
    } finally {
      holder.close();
    }
  });
});
