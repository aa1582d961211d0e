import { ReasonedError } from '../shared/errors.js';
import type { FieldProblem } from '../shared/zod-issues.js';

/** The configuration could not be read at all (missing secret, no access, emulator down). */
export class ConfigUnavailableError extends ReasonedError {}

/** The configuration was read but is not usable; `problems` name fields, never values. */
export class ConfigInvalidError extends ReasonedError<'configuration_invalid'> {
  constructor(readonly problems: FieldProblem[]) {
    super(`The relay configuration is invalid at: ${problems.map((p) => p.path).join(', ')}`, 'configuration_invalid');
  }
}
