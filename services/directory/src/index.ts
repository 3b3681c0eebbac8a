export { readDirectoryConfig, type DirectoryConfig } from './config';
export { directoryService } from './service';
