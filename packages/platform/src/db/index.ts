/** Databases of the services: data sources, migrations, provisioning, readiness and SQL helpers. */
export * from './data-source';
export * from './traced-client';
export * from './query-deadline';
export * from './migrations';
export * from './provisioning';
export * from './named-statements';
export * from './ping';
export * from './sql-text';
export * from './pg-errors';
export * from './lookalike-keys';
