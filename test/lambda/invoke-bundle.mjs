// Invokes a built Lambda bundle once, in this process, as the Lambda runtime would: imports the
// ES module, then calls its `handler` export with an EventBridge scheduled event (or the event given
// as JSON, e.g. a fan-out's {"shard":0,"totalShards":3}) and a context whose remaining time counts
// down from REMAINING_MS. The handler reads its settings from process.env.
//
//   node test/lambda/invoke-bundle.mjs <path/to/index.mjs> [remainingMs] [event JSON]
//
// The handler's log lines go to stdout as JSON; the outcome is the last stdout line, prefixed
// `INVOCATION_RESULT ` (`{ ok: true, summary }` or `{ ok: false, error: { name, message } }`).
import { pathToFileURL } from 'node:url';

const [bundle, remaining = '60000', eventJson] = process.argv.slice(2);
if (!bundle) {
  process.stderr.write('usage: node invoke-bundle.mjs <bundle.mjs> [remainingMs] [event JSON]\n');
  process.exit(2);
}
const { handler } = await import(pathToFileURL(bundle).href);
const now = Date.now();
const endsAt = now + Number(remaining);
const scheduled = {
  version: '0',
  id: 'e2e-scheduled-event',
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: '123456789012',
  time: new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  region: 'us-east-1',
  resources: ['arn:aws:events:us-east-1:123456789012:rule/posture-exporter-e2e'],
  detail: {},
};
const event = eventJson === undefined ? scheduled : JSON.parse(eventJson);
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'posture-exporter-e2e-collect',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:posture-exporter-e2e-collect',
  memoryLimitInMB: '256',
  awsRequestId: event.shard === undefined ? 'e2e-request-1' : `e2e-shard-${event.shard}`,
  logGroupName: '/aws/lambda/posture-exporter-e2e-collect',
  logStreamName: 'e2e',
  getRemainingTimeInMillis: () => Math.max(0, endsAt - Date.now()),
};
try {
  const summary = await handler(event, context);
  process.stdout.write(`INVOCATION_RESULT ${JSON.stringify({ ok: true, summary })}\n`);
} catch (err) {
  process.stdout.write(`INVOCATION_RESULT ${JSON.stringify({ ok: false, error: { name: err?.name, message: err?.message } })}\n`);
  process.exitCode = 1;
}
