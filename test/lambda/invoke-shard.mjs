// Invokes a built Lambda bundle once, in this process, with the event a fan-out delivers (a Step
// Functions Map item, or an EventBridge target's input): the JSON given, e.g. {"shard":0,"totalShards":3}.
//
//   node test/lambda/invoke-shard.mjs <path/to/index.mjs> '<event JSON>' [remainingMs]
//
// The handler's log lines go to stdout as JSON; the outcome is the last stdout line, prefixed
// `INVOCATION_RESULT ` (`{ ok: true, summary }` or `{ ok: false, error: { name, message } }`).
import { pathToFileURL } from 'node:url';

const [bundle, eventJson, remaining = '60000'] = process.argv.slice(2);
if (!bundle || !eventJson) {
  process.stderr.write('usage: node invoke-shard.mjs <bundle.mjs> <event JSON> [remainingMs]\n');
  process.exit(2);
}
const { handler } = await import(pathToFileURL(bundle).href);
const event = JSON.parse(eventJson);
const endsAt = Date.now() + Number(remaining);
const context = {
  callbackWaitsForEmptyEventLoop: true,
  functionName: 'posture-exporter-e2e-collect',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:posture-exporter-e2e-collect',
  memoryLimitInMB: '256',
  awsRequestId: `e2e-shard-${event.shard ?? 'all'}`,
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
