import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS credentials as a Lambda role provides them. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN; undefined when incomplete. */
export function credentialsFromEnv(env: Record<string, string | undefined>): AwsCredentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = env.AWS_SESSION_TOKEN;
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/** What to sign: the request exactly as it will be sent. */
export interface SignableRequest {
  method: string;
  url: URL;
  /** Headers that will be sent (besides `host`, which comes from the URL). */
  headers: Record<string, string>;
  body?: Uint8Array | string;
}

/**
 * Signs a request with AWS Signature Version 4 and returns the headers to add (`authorization`,
 * `x-amz-date`, and `x-amz-security-token` with temporary credentials). No `x-amz-content-sha256`
 * header: that is an S3 convention, and AMP, like the published SigV4 test suite, does without it.
 */
export async function signSigV4(
  req: SignableRequest,
  opts: { region: string; service: string; credentials: AwsCredentials; date: Date },
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: opts.service,
    region: opts.region,
    credentials: opts.credentials,
    sha256: Sha256,
    applyChecksum: false,
  });
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of req.url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const signed = await signer.sign(
    {
      method: req.method,
      protocol: req.url.protocol,
      hostname: req.url.hostname,
      ...(req.url.port ? { port: Number(req.url.port) } : {}),
      path: req.url.pathname,
      query,
      headers: { ...req.headers, host: req.url.host },
      body: req.body ?? '',
    },
    { signingDate: opts.date },
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'authorization' || lower === 'x-amz-date' || lower === 'x-amz-security-token') out[lower] = String(value);
  }
  return out;
}
