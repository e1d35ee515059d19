import { InvalidArgumentError } from 'commander';

/** Commander argument parsers with messages that say what was expected. */
export function intOption(name: string, min = Number.MIN_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be an integer ≥ ${min} (got "${value}")`);
    return n;
  };
}

export function floatOption(name: string, min = -Infinity, max = Infinity) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(`${name} must be a number in [${min}, ${max}] (got "${value}")`);
    }
    return n;
  };
}

export function choiceOption<T extends string>(name: string, choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`${name} must be one of ${choices.join(', ')} (got "${value}")`);
    }
    return value as T;
  };
}
