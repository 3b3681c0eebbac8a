export { COST_LIMITS, HashRefused, type ParsedHash, parseHash } from './families';
export { type StructuredHash, toStoredForm } from './structured';
