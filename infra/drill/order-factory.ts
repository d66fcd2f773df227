/** A random order line set for the drill: 1–3 distinct SKUs, 1–5 units each. */
export function randomOrderItems(random: () => number, skus: number): { sku: string; quantity: number }[] {
  const count = 1 + Math.floor(random() * 3);
  const chosen = new Set<number>();
  while (chosen.size < Math.min(count, skus)) chosen.add(Math.floor(random() * skus));
  return [...chosen].map((index) => ({ sku: skuName(index), quantity: 1 + Math.floor(random() * 5) }));
}

/** The drill's SKU names: SKU-000, SKU-001, … */
export function skuName(index: number): string {
  return `SKU-${String(index).padStart(3, '0')}`;
}
