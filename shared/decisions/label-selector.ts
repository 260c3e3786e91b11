// Kubernetes label selectors (the string form: "a=b,c!=d,e in (x,y),f notin (z),g,!h") evaluated against
// a label map. The sweep can be restricted by one; NodePool-wide work (static replicas, drift
// replacement) then only touches NodePools whose NodeClaims the selector lets the sweep see.

export class LabelSelectorError extends Error {
  override readonly name = 'LabelSelectorError';
}

type Term =
  | { op: 'eq' | 'ne'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'absent'; key: string };

function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of selector) {
    if (char === '(') depth += 1;
    if (char === ')') depth -= 1;
    if (char === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else current += char;
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function parseTerm(text: string): Term {
  const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(text);
  if (set) {
    const values = (set[3] ?? '')
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    return { op: set[2] === 'in' ? 'in' : 'notin', key: set[1] ?? '', values };
  }
  const inequality = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(text);
  if (inequality) return { op: 'ne', key: inequality[1] ?? '', value: inequality[2] ?? '' };
  const equality = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(text);
  if (equality) return { op: 'eq', key: equality[1] ?? '', value: equality[2] ?? '' };
  if (/^![^!=\s()]+$/.test(text)) return { op: 'absent', key: text.slice(1) };
  if (/^[^!=\s()]+$/.test(text)) return { op: 'exists', key: text };
  throw new LabelSelectorError(`cannot parse label selector term ${JSON.stringify(text)}`);
}

function parseLabelSelector(selector: string): Term[] {
  return splitTerms(selector).map(parseTerm);
}

export function labelsMatch(selector: string, labels: Readonly<Record<string, string>>): boolean {
  return parseLabelSelector(selector).every((term) => {
    const has = Object.hasOwn(labels, term.key);
    const value = labels[term.key];
    switch (term.op) {
      case 'eq':
        return has && value === term.value;
      case 'ne':
        return !has || value !== term.value;
      case 'in':
        return has && term.values.includes(value ?? '');
      case 'notin':
        return !has || !term.values.includes(value ?? '');
      case 'exists':
        return has;
      case 'absent':
        return !has;
    }
  });
}
