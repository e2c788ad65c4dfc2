/**
 * A loopback stand-in for SSM Parameter Store and Secrets Manager at the SDK's edge: it speaks the
 * AWS JSON 1.1 protocol the SDK clients use (POST /, `X-Amz-Target`), so the real Powertools
 * providers and AWS SDK clients run unchanged against it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One call the fake received. */
export interface AwsCall {
  target: string;
  body: Record<string, unknown>;
  /** Whether the request was SigV4-signed (the SDK signs with the configured credentials). */
  signed: boolean;
}

/** A running fake; `parameters` and `secrets` may be changed between calls (a rotated key). */
export interface AwsFake {
  endpoint: string;
  calls: AwsCall[];
  parameters: Map<string, string>;
  secrets: Map<string, string>;
  /** `clientConfig` for the SDK clients (`KeyStoreOptions.clientConfig`). */
  clientConfig: Record<string, unknown>;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'fake-request-id' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Starts the fake on 127.0.0.1 with the given parameter and secret values. */
export async function startAwsFake(initial: { parameters?: Record<string, string>; secrets?: Record<string, string> } = {}): Promise<AwsFake> {
  const calls: AwsCall[] = [];
  const parameters = new Map(Object.entries(initial.parameters ?? {}));
  const secrets = new Map(Object.entries(initial.secrets ?? {}));
  const server = createServer((req, res) => {
    void (async () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const body = await readJson(req);
      calls.push({ target, body, signed: /^AWS4-HMAC-SHA256 Credential=x\//.test(String(req.headers.authorization ?? '')) });
      if (req.method !== 'POST') return send(res, 405, { __type: 'MethodNotAllowed', message: 'POST only' });
      if (target === 'AmazonSSM.GetParameter') {
        const name = String(body.Name);
        const value = parameters.get(name);
        if (value === undefined) return send(res, 400, { __type: 'ParameterNotFound', message: `Parameter ${name} not found.` });
        return send(res, 200, {
          Parameter: {
            Name: name,
            Type: 'SecureString',
            // Without WithDecryption a SecureString comes back as ciphertext, as the real service does.
            Value: body.WithDecryption === true ? value : Buffer.from(`kms-ciphertext:${name}`).toString('base64'),
            Version: 1,
            ARN: `arn:aws:ssm:us-east-1:123456789012:parameter${name}`,
            DataType: 'text',
          },
        });
      }
      if (target === 'secretsmanager.GetSecretValue') {
        const id = String(body.SecretId);
        const value = secrets.get(id);
        if (value === undefined) return send(res, 400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
        return send(res, 200, {
          ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${id}-AbCdEf`,
          Name: id,
          SecretString: value,
          VersionId: '01234567-89ab-cdef-0123-456789abcdef',
          VersionStages: ['AWSCURRENT'],
          CreatedDate: 1_790_000_000,
        });
      }
      send(res, 400, { __type: 'UnknownOperationException', message: `unknown target ${target}` });
    })().catch((err: unknown) => send(res, 500, { __type: 'InternalFailure', message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    calls,
    parameters,
    secrets,
    clientConfig: { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
