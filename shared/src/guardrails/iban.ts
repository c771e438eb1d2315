/**
 * The ISO 13616 check of an IBAN (spaces removed, upper case): country letters, two check digits,
 * then the account; valid when the rearranged number is 1 modulo 97 (ISO 7064 MOD 97-10).
 */
export function ibanValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(iban)) return false;
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    // Letters count as two digits (A = 10 … Z = 35).
    const value = code >= 65 ? code - 55 : code - 48;
    rest = value > 9 ? (rest * 100 + value) % 97 : (rest * 10 + value) % 97;
  }
  return rest === 1;
}
