/** An endpoint's recent attempts (status, latency, the first bytes of each answer) and its messages, each replayable. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { webhookKeys, webhooks } from '../api/webhooks';
import { Pager, Scroll } from '../components/list';
import { Notice, ProblemAlert, counted } from '../components/ui';

const when = (t: string) => new Date(t).toLocaleString();

/** A table's page and page size (a new size starts at page 1). */
function usePaging() {
  const [page, setPage] = useState(1);
  const [pageSize, setSize] = useState(10);
  return { page, pageSize, setPage, setPageSize: (n: number) => { setSize(n); setPage(1); } };
}

function Attempts({ id }: { id: string }) {
  const paging = usePaging();
  const { page, pageSize: PAGE } = paging;
  const attempts = useQuery({ queryKey: [...webhookKeys.all, id, 'attempts', page, PAGE], queryFn: () => webhooks.attempts(id, { page, pageSize: PAGE }), refetchInterval: 5_000 });
  const a = attempts.data;
  return (
    <section aria-labelledby="webhook-attempts">
      <h2 id="webhook-attempts">Recent attempts</h2>
      <ProblemAlert error={attempts.error} />
      {a ? (
        <>
          <Scroll label="Attempts">
            <table className="wide">
              <caption>{counted(a.totalCount, 'attempt')}, newest first</caption>
              <thead><tr><th scope="col">When</th><th scope="col">Message</th><th scope="col">Type</th><th scope="col">Try</th><th scope="col">Status</th><th scope="col">Latency</th><th scope="col">Answer</th></tr></thead>
              <tbody>
                {a.items.map((x) => (
                  <tr key={`${x.messageId}-${x.attempt}`}>
                    <td>{when(String(x.startedAt))}</td>
                    <td><code>{x.messageId}</code></td>
                    <td>{x.eventType}</td>
                    <td>{x.attempt}</td>
                    <td>{x.statusCode ?? '—'} {x.outcome}</td>
                    <td>{x.durationMs} ms</td>
                    <td><code className="secret-value">{(x.response || x.error).slice(0, 120) || '—'}</code></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <Pager list={paging} totalPages={a.totalPages} />
        </>
      ) : null}
    </section>
  );
}

function Messages({ id }: { id: string }) {
  const qc = useQueryClient();
  const paging = usePaging();
  const { page, pageSize: PAGE, setPage } = paging;
  const [status, setStatus] = useState<'' | 'pending' | 'delivered' | 'dead'>('');
  const [notice, setNotice] = useState('');
  const messages = useQuery({ queryKey: [...webhookKeys.all, id, 'messages', page, PAGE, status], queryFn: () => webhooks.messages(id, { page, pageSize: PAGE, ...(status ? { status } : {}) }), refetchInterval: 5_000 });
  const replay = useMutation({ mutationFn: (messageId: string) => webhooks.replay(id, messageId), onSuccess: (m) => { setNotice(`Message ${m.id} queued again.`); return qc.invalidateQueries({ queryKey: webhookKeys.all }); } });
  const m = messages.data;
  return (
    <section aria-labelledby="webhook-messages">
      <h2 id="webhook-messages">Messages</h2>
      <div className="field">
        <label htmlFor="webhook-status">Show</label>
        <select id="webhook-status" value={status} onChange={(e) => { setStatus(e.target.value as typeof status); setPage(1); }}>
          <option value="">All</option>
          <option value="pending">Waiting</option>
          <option value="delivered">Delivered</option>
          <option value="dead">Dead letters</option>
        </select>
      </div>
      {notice ? <Notice>{notice}</Notice> : null}
      <ProblemAlert error={messages.error ?? replay.error} />
      {m ? (
        <>
          <Scroll label="Messages">
            <table className="wide">
              <caption>{counted(m.totalCount, 'message')}, newest first</caption>
              <thead><tr><th scope="col">Event time</th><th scope="col">Message</th><th scope="col">Type</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col"><span className="visually-hidden">Action</span></th></tr></thead>
              <tbody>
                {m.items.map((x) => (
                  <tr key={x.id}>
                    <td>{when(String(x.occurredAt))}</td>
                    <td><code>{x.id}</code></td>
                    <td>{x.eventType}</td>
                    <td>{x.status === 'dead' ? 'dead letter' : x.status === 'pending' ? 'waiting' : 'delivered'}</td>
                    <td>{x.attempts}</td>
                    <td>{x.lastStatusCode ?? '—'} {x.lastError.slice(0, 80)}</td>
                    <td><button type="button" aria-label={`Replay ${x.id}`} onClick={() => replay.mutate(x.id)} disabled={replay.isPending}>Replay</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          <Pager list={paging} totalPages={m.totalPages} />
        </>
      ) : null}
    </section>
  );
}

export function WebhookActivity({ id }: { id: string }) {
  return (
    <>
      <Attempts id={id} />
      <Messages id={id} />
    </>
  );
}
