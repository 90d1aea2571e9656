import { InvalidArgumentError } from 'commander';

/** Commander argument parser for a whole number >= 1; a bad value is a usage error naming the flag. */
export function parsePositiveInteger(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < 1) {
    throw new InvalidArgumentError('Expected a whole number of 1 or more.');
  }
  return number;
}
