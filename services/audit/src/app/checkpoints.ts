/**
 * Signing the chain's head: every `every` appended entries (counted by this process) and every
 * `intervalMs` when the head moved, and once at start. Each checkpoint is logged (a line with
 * the checkpoint and the public key) and published to the checkpoint log outside the database.
 *
 * A head is signed only when the chain still extends the newest checkpoint of this key (read back
 * from the checkpoint log, then the last one signed here): its entries since link to that
 * checkpoint's hash. A chain that was cut or rewritten meanwhile is never signed over; that is
 * logged as an error at every try, and verify names it. The first checkpoint of a key is signed
 * over the head as found.
 */
import type { Logger } from '@iam/platform';
import { type Checkpoint, type CheckpointSigner, checkpointJson } from '../domain/checkpoint';
import type { AuditUnitOfWork, CheckpointLog } from '../domain/ports';
import { ChainVerifier } from '../domain/verifier';

export interface CheckpointOptions {
  /** Sign after this many appended entries. */
  readonly every: number;
  /** Sign this often when the head moved (ms). */
  readonly intervalMs: number;
}

export interface CheckpointDeps {
  readonly uow: AuditUnitOfWork;
  readonly log: CheckpointLog;
  readonly signer: CheckpointSigner;
  readonly logger: Logger;
  readonly clock?: () => Date;
}

export interface Checkpointer {
  /** Counts one appended entry; the `every`-th signs a checkpoint (in the background). */
  appended(): void;
  /** Signs the head now, if it moved and extends the last checkpoint; resolves with what it signed. */
  checkpoint(): Promise<Checkpoint | undefined>;
  /** Stops the timer and waits for a signing under way. */
  stop(): Promise<void>;
}

/** Checkpoints read back at start to find this key's newest. */
const READ_BACK = 1_000;

export function createCheckpointer(deps: CheckpointDeps, o: CheckpointOptions): Checkpointer {
  const { uow, log, signer, logger } = deps;
  const clock = deps.clock ?? (() => new Date());
  /** The newest checkpoint of this key: read back from the log, then the last signed here. */
  let base: Checkpoint | undefined;
  let readBack = false;
  /** Signed and logged but not yet in the checkpoint log (the bus was down): published at the next try. */
  let unpublished: Checkpoint | undefined;
  let count = 0;
  let running: Promise<unknown> = Promise.resolve();

  const readBase = async (): Promise<void> => {
    if (readBack) return;
    try {
      for (const c of await log.read(READ_BACK)) if (signer.verifies(c) && (!base || c.seq > base.seq)) base = c;
      readBack = true;
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'audit checkpoints: the checkpoint log cannot be read yet; signing from the last checkpoint signed here');
    }
  };

  const publish = async (c: Checkpoint): Promise<void> => {
    try {
      await log.publish(c);
      unpublished = undefined;
    } catch (err) {
      unpublished = c;
      logger.warn({ err: (err as Error).message, seq: c.seq }, 'audit checkpoint not published yet (its log line holds it); tried again with the next one');
    }
  };

  const sign = async (): Promise<Checkpoint | undefined> => {
    await readBase();
    if (unpublished) await publish(unpublished);
    const from = base;
    let head: { seq: number; hash: string };
    if (from) {
      const walked = await uow.run(({ log: chain }) => chain.verify((start) => new ChainVerifier({ start, checkpoints: [], keys: [] }), from));
      head = walked.head;
      if (head.seq === from.seq && head.hash === from.hash) return undefined;
      if (!walked.report.ok) {
        logger.error({ reason: walked.report.reason, lastCheckpoint: checkpointJson(from) }, 'audit chain no longer extends its last signed checkpoint: not signing; verify names the cut');
        return undefined;
      }
    } else {
      head = await uow.run(({ log: chain }) => chain.head());
      if (head.seq === 0) return undefined;
    }
    const c = signer.sign(head, clock());
    logger.info({ checkpoint: checkpointJson(c), publicKey: signer.publicKey }, 'audit checkpoint signed');
    base = c;
    await publish(c);
    return c;
  };

  const checkpoint = (): Promise<Checkpoint | undefined> => {
    const next = running.then(sign);
    running = next.catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'audit checkpoint failed; tried again at the next one'));
    return next;
  };
  const background = () => void checkpoint().catch(() => undefined);

  const timer = setInterval(background, o.intervalMs);
  timer.unref();
  background();
  return {
    appended: () => {
      if (++count < o.every) return;
      count = 0;
      background();
    },
    checkpoint,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
