/**
 * One request of a push (remote write, the Pushgateway) through the one HTTP client
 * (src/net/transport.ts, or a dispatcher a test injects), its answer's body read whole as text.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { HttpTransport, type Dispatch } from './transport.js';

/** An answer, whatever its status. */
export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What one request sends. */
export interface Outgoing {
  method: 'GET' | 'POST' | 'PUT';
  headers: Record<string, string>;
  body?: Uint8Array | string;
  /** Cuts the request (its attempt's timeout, the push's cancellation): it rejects with the reason. */
  signal: AbortSignal;
}

/**
 * The pushes' transport: connections kept and proxied as the portal's are (the process's Agents);
 * each attempt's time is bounded by its `signal`, and these only bound a connection that hangs.
 */
let pushes: HttpTransport | undefined;
function pushTransport(): HttpTransport {
  return (pushes ??= new HttpTransport({ connectMs: 10_000, headersMs: 300_000, bodyMs: 300_000 }));
}

/** Sends one request; resolves with the answer whatever its status, rejects with the transport's error or the signal's reason. */
export function exchange(url: string, out: Outgoing, dispatcher: Dispatch = pushTransport()): Promise<Answer> {
  const target = new URL(url);
  return new Promise<Answer>((resolve, reject) => {
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let done = false;
    const settle = (err?: unknown): void => {
      if (done) return;
      done = true;
      out.signal.removeEventListener('abort', onAbort);
      if (err !== undefined) reject(err);
      else resolve({ status, headers, body: Buffer.concat(chunks).toString('utf8') });
    };
    let abort: ((reason: Error) => void) | undefined;
    const onAbort = (): void => {
      const reason = out.signal.reason instanceof Error ? out.signal.reason : new Error('aborted');
      settle(reason);
      abort?.(reason);
    };
    if (out.signal.aborted) return onAbort();
    out.signal.addEventListener('abort', onAbort, { once: true });
    try {
      dispatcher.dispatch(
        { origin: target.origin, path: target.pathname + target.search, method: out.method, headers: out.headers, body: out.body },
        {
          onRequestStart: (controller) => {
            abort = (reason) => controller.abort(reason);
            if (done) controller.abort(new Error('aborted'));
          },
          onResponseStart: (_c, code, answerHeaders) => {
            // (1xx answers come before the final one.)
            if (code < 200) return;
            status = code;
            headers = answerHeaders as IncomingHttpHeaders;
          },
          onResponseData: (_c, chunk) => void chunks.push(chunk),
          onResponseEnd: () => settle(),
          onResponseError: (_c, err) => settle(err),
        },
      );
    } catch (err) {
      settle(err);
    }
  });
}
