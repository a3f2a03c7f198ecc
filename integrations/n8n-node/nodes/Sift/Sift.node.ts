import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeApiError, NodeConnectionTypes, NodeOperationError, jsonParse } from 'n8n-workflow';

import { evidenceItems, passageItems } from './items';
import { properties } from './properties';
import { siftRequest } from './transport';

// Added to a search's deadline for the HTTP call itself: the service answers by
// deadline + grace (single-shot fallback), never later.
const CALL_MARGIN_S = 15;
const DEFAULT_DEADLINE_S = 60;

export class Sift implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Sift',
		name: 'sift',
		icon: { light: 'file:../../icons/sift.svg', dark: 'file:../../icons/sift.dark.svg' },
		group: ['transform'],
		version: [1],
		subtitle: '={{$parameter["operation"] + ": " + $parameter["collection"]}}',
		description:
			'Finds the passages in your documents that answer a question (multi-hop search), each with its document ID, page and section',
		defaults: {
			name: 'Sift',
		},
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		usableAsTool: true,
		credentials: [
			{
				name: 'siftApi',
				required: true,
			},
		],
		properties,
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const out: INodeExecutionData[] = [];
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			try {
				const rows = await run(this, itemIndex);
				for (const json of rows) {
					out.push({ json, pairedItem: { item: itemIndex } });
				}
			} catch (error) {
				if (this.continueOnFail()) {
					out.push({
						json: { error: (error as Error).message },
						pairedItem: { item: itemIndex },
					});
					continue;
				}
				if (error instanceof NodeApiError) {
					throw new NodeApiError(this.getNode(), error.errorResponse ?? {}, {
						message: error.message,
						description: error.description ?? undefined,
						httpCode: error.httpCode ?? undefined,
						itemIndex,
					});
				}
				throw new NodeOperationError(this.getNode(), error as Error, { itemIndex });
			}
		}
		return [out];
	}
}

function filtersOf(
	ctx: IExecuteFunctions,
	raw: unknown,
	itemIndex: number,
): IDataObject | undefined {
	if (raw === undefined || raw === null || raw === '') return undefined;
	const value =
		typeof raw === 'string' ? jsonParse<unknown>(raw, { fallbackValue: undefined }) : raw;
	if (value === undefined || value === null || typeof value !== 'object' || Array.isArray(value)) {
		throw new NodeOperationError(ctx.getNode(), 'Filters must be a JSON object', {
			itemIndex,
			description:
				'Short form {"lang": "en", "format": "markdown"}, {"page": {"gte": 3, "lte": 5}}, or {"logic": "and", "conditions": [{"field": "lang", "op": "eq", "value": "en"}]}.',
		});
	}
	return Object.keys(value).length ? (value as IDataObject) : undefined;
}

async function run(ctx: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const operation = ctx.getNodeParameter('operation', itemIndex) as string;
	const collection = (ctx.getNodeParameter('collection', itemIndex) as string).trim();
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const retry = options.retryWhenBusy !== false;
	const where = `collection '${collection}'`;
	const name = encodeURIComponent(collection);

	if (operation === 'search' || operation === 'singleShot') {
		const deadline = Number(options.deadlineSeconds ?? DEFAULT_DEADLINE_S);
		const body: IDataObject = {
			collection,
			question: ctx.getNodeParameter('question', itemIndex) as string,
			top_k: ctx.getNodeParameter('topK', itemIndex) as number,
			mode: operation === 'search' ? 'agentic' : 'single_shot',
			deadline_s: deadline,
		};
		const filters = filtersOf(ctx, ctx.getNodeParameter('filters', itemIndex, ''), itemIndex);
		if (filters) body.filters = filters;
		if (operation === 'search' && options.maxTurns) body.max_turns = options.maxTurns;
		const result = await siftRequest(
			ctx,
			{
				method: 'POST',
				path: '/v1/search',
				body,
				timeoutS: deadline + CALL_MARGIN_S,
				subject: where,
				retry,
			},
			itemIndex,
		);
		return evidenceItems(collection, result);
	}

	if (operation === 'readDocument') {
		const docId = (ctx.getNodeParameter('docId', itemIndex) as string).trim();
		const limit = ctx.getNodeParameter('maxChunks', itemIndex) as number;
		const answer = await siftRequest(
			ctx,
			{
				method: 'GET',
				path: `/v1/collections/${name}/documents/${docId.split('/').map(encodeURIComponent).join('/')}`,
				qs: { limit },
				timeoutS: DEFAULT_DEADLINE_S,
				subject: `document '${docId}' in ${where}`,
				retry,
			},
			itemIndex,
		);
		return passageItems(collection, (answer.chunks as IDataObject[]) ?? []);
	}

	if (operation === 'grep') {
		const body: IDataObject = {
			pattern: ctx.getNodeParameter('pattern', itemIndex) as string,
			top_k: ctx.getNodeParameter('topK', itemIndex) as number,
		};
		const filters = filtersOf(ctx, ctx.getNodeParameter('filters', itemIndex, ''), itemIndex);
		if (filters) body.filters = filters;
		const answer = await siftRequest(
			ctx,
			{
				method: 'POST',
				path: `/v1/collections/${name}/grep`,
				body,
				timeoutS: DEFAULT_DEADLINE_S,
				subject: where,
				retry,
			},
			itemIndex,
		);
		return passageItems(collection, (answer.hits as IDataObject[]) ?? []);
	}

	throw new NodeOperationError(ctx.getNode(), `Unknown operation '${operation}'`, { itemIndex });
}
