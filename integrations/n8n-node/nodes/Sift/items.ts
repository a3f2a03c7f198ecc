import type { IDataObject } from 'n8n-workflow';

function pageOf(value: unknown): number | null {
	if (typeof value === 'number' && Number.isInteger(value)) return value;
	if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) return Number(value);
	return null;
}

/** Where a passage sits, from its stored metadata: its first page, [first, last] page, and
 * its section (the heading path), each null or empty where the document has no layout. */
export function location(metadata: IDataObject): {
	page: number | null;
	pages: number[];
	section: string | null;
} {
	const pages: number[] = [];
	const raw = Array.isArray(metadata.pages) ? metadata.pages : [];
	for (const value of [metadata.page, ...raw]) {
		const page = pageOf(value);
		if (page !== null && !pages.includes(page)) pages.push(page);
	}
	const section = typeof metadata.section === 'string' ? metadata.section : null;
	if (!pages.length) return { page: null, pages: [], section };
	const first = Math.min(...pages);
	return { page: first, pages: [first, Math.max(...pages)], section };
}

/** What sift flagged as not found (its `SearchResult.not_found`): null when the evidence
 * matches the question; else the names the question types that occur nowhere in the
 * collection (`not_found:<name>` flags), or [] when nothing holds enough of the question's
 * key terms (`not_found`): the passages are then only the nearest text. */
export function notFound(flags: string[]): string[] | null {
	const missing = flags
		.filter((flag) => flag.startsWith('not_found:'))
		.map((flag) => flag.slice('not_found:'.length));
	return missing.length || flags.includes('not_found') ? missing : null;
}

/** One item per evidence passage of a SearchResult, most relevant first. */
export function evidenceItems(collection: string, result: IDataObject): IDataObject[] {
	const evidence = (result.evidence as IDataObject[] | undefined) ?? [];
	const flags = (result.flags as string[] | undefined) ?? [];
	const missing = notFound(flags);
	return evidence.map((passage, index) => {
		const metadata = (passage.metadata as IDataObject | undefined) ?? {};
		return {
			rank: index + 1,
			collection,
			doc_id: passage.doc_id,
			chunk_id: passage.chunk_id,
			title: passage.title,
			text: passage.text,
			score: passage.score,
			...location(metadata),
			justification: passage.justification ?? '',
			found_by: passage.found_by ?? [],
			metadata,
			stopped_because: result.stopped_because,
			degraded: flags.includes('degraded'),
			// A copy per item: n8n items do not share objects.
			not_found: missing === null ? null : [...missing],
		};
	});
}

/** One item per passage of a read or a grep answer (the service already gives page and
 * section). */
export function passageItems(collection: string, passages: IDataObject[]): IDataObject[] {
	return passages.map((passage) => ({ collection, ...passage }));
}
