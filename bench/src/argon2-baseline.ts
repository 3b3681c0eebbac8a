// Baseline: raw argon2id verifications per second at the given parameters and concurrency.
import * as argon2 from 'argon2';

async function main(): Promise<void> {
  const [memoryKiB, iterations, parallelism, concurrency, seconds] = process.argv.slice(2).map(Number) as [number, number, number, number, number];
  const hash = await argon2.hash('Bench-Passw0rd!', { type: argon2.argon2id, memoryCost: memoryKiB, timeCost: iterations, parallelism });
  const end = Date.now() + seconds * 1000;
  const cpu = process.cpuUsage();
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        await argon2.verify(hash, 'Bench-Passw0rd!');
        done++;
      }
    }),
  );
  // CPU of every thread of this process (the hashes run on libuv's pool) per verification.
  const used = process.cpuUsage(cpu);
  process.stdout.write(JSON.stringify({ perSecond: done / seconds, cpuMsPerOp: (used.user + used.system) / 1000 / Math.max(done, 1) }));
}

void main();
