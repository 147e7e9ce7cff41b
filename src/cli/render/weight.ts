import { grouped } from './format.js';

/**
 * The unit of a report's weights (`carbon report --unit`): kg, as the API counts them (the
 * default: whole numbers, exact, the names scripts already read), or tonnes, as sustainability
 * reports are read. Tonnes are made from the integer kg with three decimals, never through a
 * float's rounding: 12,345 kg is "12.345" t, 5 kg "0.005" t.
 */
export type WeightUnit = 'kg' | 't';

export interface Weight {
  unit: WeightUnit;
  /** A field's name in CSV and JSON: `kg`, `placed_kg`; `t`, `placed_t`. */
  field(prefix?: string): string;
  /** A column's heading for people: `kg`, `placed kg`; `t`, `placed t`. */
  heading(prefix?: string): string;
  /** For people: grouped, without the unit ("12,000"; "12.000"). */
  text(kg: number): string;
  /** For files and scripts: no grouping ("12000"; "12.000"). */
  plain(kg: number): string;
  /** For JSON: a number (kg whole; tonnes to three decimals). */
  number(kg: number): number;
}

function tonnes(kg: number, group: (n: number) => string): string {
  const sign = kg < 0 ? '-' : '';
  const abs = Math.abs(kg);
  return `${sign}${group(Math.floor(abs / 1000))}.${String(abs % 1000).padStart(3, '0')}`;
}

export function weight(unit: WeightUnit): Weight {
  const name = (prefix: string | undefined, sep: string) => (prefix === undefined ? unit : `${prefix}${sep}${unit}`);
  return {
    unit,
    field: (prefix) => name(prefix, '_'),
    heading: (prefix) => name(prefix, ' '),
    text: unit === 'kg' ? grouped : (kg) => tonnes(kg, grouped),
    plain: unit === 'kg' ? String : (kg) => tonnes(kg, String),
    number: unit === 'kg' ? (kg) => kg : (kg) => Number(tonnes(kg, String)),
  };
}
