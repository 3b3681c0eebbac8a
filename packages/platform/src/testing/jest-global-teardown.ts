export default async function teardown(): Promise<void> {
  await globalThis.__IAM_EMBEDDED_PG__?.stop();
}
