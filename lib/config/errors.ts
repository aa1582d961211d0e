import type { FieldProblem } from './schema.js';

/** The configuration could not be read at all (missing secret, no access, emulator down). */
export class ConfigUnavailableError extends Error {
  constructor(
    message: string,
    readonly reason: string,
  ) {
    super(message);
    this.name = 'ConfigUnavailableError';
  }
}

/** The configuration was read but is not usable; `problems` name fields, never values. */
export class ConfigInvalidError extends Error {
  constructor(readonly problems: FieldProblem[]) {
    super(`The relay configuration is invalid at: ${problems.map((p) => p.path).join(', ')}`);
    this.name = 'ConfigInvalidError';
  }
}
