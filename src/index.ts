/**
 * What a user embeds: the Lambda handler, the serve factory, the collection service, the config
 * loader, the metric catalogue and renderers, the simulated portal, and the typed errors.
 */
export { handler, createHandler, InvocationFailedError, type InvocationSummary } from './runtime/lambda.js';
export { startServe, type ServeHandle } from './runtime/serve.js';
export { startMetricsServer } from './http/server.js';
export { Exporter } from './exporter/exporter.js';
export { VERSION } from './version.js';
export { main as runCli } from './runtime/cli.js';
export { loadConfig, type Config, type PortalConfig, type KeySource } from './config/load.js';
export { checkServeConfig, planOf } from './schedule/fit.js';
export { SETTINGS } from './config/settings.js';
export { CATALOGUE, type MetricName } from './collect/catalogue.js';
export type { MetricDef } from './metrics/definition.js';
export type { Sample, Snapshot } from './metrics/sample.js';
export { renderText, renderJson, contentType, type TextFormat } from './metrics/render.js';
export { toSamples } from './collect/samples.js';
export { startSimulator, type Simulator, type SimulatorOptions } from './simulator/index.js';
export { systemClock, FakeClock, type Clock } from './core/clock.js';
export { createLogger, type Logger } from './core/log.js';
export * from './errors.js';
