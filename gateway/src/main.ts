#!/usr/bin/env node
// The gateway as its own process (one or more replicas behind a load balancer).
import { JetStreamEventBus } from '@iam/platform/bus';
import { Lifecycle, type Logger, createLogger, createMetrics, exitOnStartupError, readConfig, readRuntimeConfig, startTracing } from '@iam/platform/core';
import { grpcCredentials } from '@iam/platform/grpc';
import { readGatewayConfig } from './config';
import { startGateway } from './gateway';

async function main(): Promise<void> {
  let logger: Logger | undefined;
  try {
    const config = readConfig(process.env, (e) => {
      const runtime = readRuntimeConfig(e, {}, { callKeyRequired: true });
      if (!runtime.natsUrl) e.problem('NATS_URL', 'is required when the gateway runs as its own process');
      return { runtime, gateway: readGatewayConfig(e) };
    });
    logger = createLogger({ level: config.runtime.logLevel, service: 'gateway' });
    const metrics = createMetrics();
    const lifecycle = new Lifecycle(logger, config.runtime.shutdownTimeoutMs);
    startTracing(config.runtime.tracing, { serviceName: 'gateway', logger, lifecycle });
    const bus = new JetStreamEventBus({ url: config.runtime.natsUrl!, name: 'gateway', logger, metrics, connection: config.runtime.nats });
    lifecycle.onShutdown('event bus', () => bus.close());
    lifecycle.installSignalHandlers();
    await startGateway(config.gateway, { logger, metrics, bus, lifecycle, callKey: config.runtime.callKey!, grpcClientCredentials: grpcCredentials(config.runtime.grpcTls).client });
  } catch (err) {
    exitOnStartupError(err, logger);
  }
}

void main();
