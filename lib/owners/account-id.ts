// On the relay's cold path: imports nothing, so that no other owner code comes with it.

/** An AWS account id always has this many digits. */
export const AWS_ACCOUNT_ID_DIGITS = 12;

/**
 * The account id under which the directory knows a delivery's account, read from the delivery's
 * JSON as it came. An AWS account id always has twelve digits, and directory-sync writes it so;
 * one sent as a JSON number has lost its leading zeros, which are put back when the cloud is AWS
 * or not named (another cloud's numeric id is taken as it came).
 */
export function ownerAccountIdOf(accountId: unknown, cloudProvider: unknown): string | undefined {
  if (typeof accountId === 'number') {
    const aws = cloudProvider === undefined || cloudProvider === null || String(cloudProvider).trim().toLowerCase() === 'aws';
    const digits = String(accountId);
    return aws && Number.isSafeInteger(accountId) && accountId >= 0 && digits.length < AWS_ACCOUNT_ID_DIGITS
      ? digits.padStart(AWS_ACCOUNT_ID_DIGITS, '0')
      : digits;
  }
  const text = typeof accountId === 'string' ? accountId.trim() : '';
  return text === '' ? undefined : text;
}
