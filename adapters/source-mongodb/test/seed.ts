import { Binary, BSON, Decimal128, Double, Int32, Long, ObjectId, type Document } from 'mongodb';

/** Documents of every common BSON type; ~1.5 MiB in all, so an abort lands mid-dump. */
export function seedDocuments(count = 3000): Document[] {
  return Array.from({ length: count }, (_, i) => ({
    _id: new ObjectId(i.toString(16).padStart(24, '0')),
    n: new Int32(i),
    big: Long.fromString(`${9_000_000_000_000 + i}`),
    price: new Double(i + 0.25),
    exact: Decimal128.fromString(`${i}.10`),
    at: new Date(Date.UTC(2024, 0, 1, 0, 0, i % 60)),
    email: `user${i}@example.test`,
    name: i % 7 === 0 ? `naïve 東京 ${i}` : `user ${i}`,
    tags: ['a', 'b', new Int32(i % 3)],
    nested: { deep: { flag: i % 2 === 0, blob: new Binary(Buffer.alloc(16, i % 256)) } },
    filler: 'x'.repeat(350),
  }));
}

/** Canonical Extended JSON of a value: the comparison keeps every type (Int32 vs Double vs Long...). */
export function canonical(value: unknown): string {
  return BSON.EJSON.stringify(value as Document, { relaxed: false });
}
