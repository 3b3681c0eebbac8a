/**
 * Unicode security mechanisms (UTS #39) over the Unicode data generated into
 * uts39-data.generated.ts (tools/unicode/README.md): confusable skeletons and the identifier
 * checks of its section 5. Shared by the services that guard names against lookalikes.
 */
export { lookalikeKey, skeleton } from './skeleton';
export {
  RECOMMENDED_SCRIPTS,
  type RestrictionLevel,
  disallowedCharacter,
  hasLatinLetters,
  hasMixedNumbers,
  isIdentifierAllowed,
  otherScriptsDrawnAsLatin,
  restrictionLevel,
  withinRestrictionLevel,
} from './identifier';
export { UTS39_DATA_VERSION } from './uts39-data.generated';
