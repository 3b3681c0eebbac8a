export { readDirectoryConfig, type DirectoryConfig } from './config';
export { directoryService, createDirectoryUseCases } from './service';
export type { TxtResolver } from './domain/organizations';
export { runCreateAdmin } from './cli/create-admin';
export { runImport } from './cli/import-users';
