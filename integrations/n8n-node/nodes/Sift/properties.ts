import type { INodeProperties } from 'n8n-workflow';

const searches = { show: { operation: ['search', 'singleShot'] } };

export const properties: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Search',
				value: 'search',
				action: 'Search for the passages that answer a question',
				description:
					'Agentic multi-hop search: sift searches several times, follows what it finds to the next hop and returns the passages that answer the question, most relevant first, each with its document ID, page, section and why it was kept. Use it for any question about the documents; it finds facts, it does not answer. When not_found is set (the names the question types that occur nowhere, or an empty list), the documents do not match the question and the passages are only the nearest text.',
			},
			{
				name: 'Single-Shot Search',
				value: 'singleShot',
				action: 'Search once for passages like a question',
				description:
					'One hybrid (keyword and vector) search, no follow-up hops: faster, for simple look-ups of one fact',
			},
			{
				name: 'Read Document',
				value: 'readDocument',
				action: 'Read a document s passages in order',
				description:
					'The passages of one document in order, by the document ID a search returned: read it when a passage looks relevant but partial',
			},
			{
				name: 'Grep',
				value: 'grep',
				action: 'Find passages matching an exact pattern',
				description:
					'Passages matching a regular expression (RE2 syntax): for exact names, codes, numbers or phrases a search may miss',
			},
		],
		default: 'search',
	},
	{
		displayName: 'Collection',
		name: 'collection',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'docs',
		description: 'Name of the sift collection to search (as served by `sift serve`)',
	},
	{
		displayName: 'Question',
		name: 'question',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'Where was the engineer whose company built the Eiffel Tower born?',
		description:
			'The question in natural language (any language the collection holds), with every detail that matters',
		displayOptions: searches,
	},
	{
		displayName: 'Document ID',
		name: 'docId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'gustave',
		description: 'The doc_id of a passage a search or grep returned',
		displayOptions: { show: { operation: ['readDocument'] } },
	},
	{
		displayName: 'Pattern',
		name: 'pattern',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'Gustave\\s+Eiffel',
		description: 'A regular expression in RE2 syntax (no look-arounds or back-references)',
		displayOptions: { show: { operation: ['grep'] } },
	},
	{
		displayName: 'Top K',
		name: 'topK',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 10,
		description: 'Max number of passages to return',
		displayOptions: { show: { operation: ['search', 'singleShot', 'grep'] } },
	},
	{
		displayName: 'Max Chunks',
		name: 'maxChunks',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 1000 },
		default: 100,
		description: 'Max number of passages of the document to return, from its start',
		displayOptions: { show: { operation: ['readDocument'] } },
	},
	{
		displayName: 'Filters (JSON)',
		name: 'filters',
		type: 'json',
		default: '',
		placeholder: '{"lang": "en", "format": "markdown"}',
		description:
			'Metadata conditions every passage must meet: {"field": value}, {"field": [v1, v2]}, {"field": {"gte": 1, "lt": 9}}, or {"logic": "or", "conditions": [{"field": ..., "op": ..., "value": ...}]}',
		displayOptions: { show: { operation: ['search', 'singleShot', 'grep'] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Deadline (Seconds)',
				name: 'deadlineSeconds',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 60,
				description:
					'Whether search must end by then: past it sift answers with the single-shot result, marked degraded. The server may cap it lower.',
				displayOptions: searches,
			},
			{
				displayName: 'Max Turns',
				name: 'maxTurns',
				type: 'number',
				typeOptions: { minValue: 1, maxValue: 256 },
				default: 8,
				description: 'Max number of search rounds of the agentic search',
				displayOptions: { show: { '/operation': ['search'] } },
			},
			{
				displayName: 'Retry When Busy',
				name: 'retryWhenBusy',
				type: 'boolean',
				default: true,
				description:
					'Whether to wait and retry (up to 3 times, as long as the server asks in Retry-After, at most 30 s each) when sift answers 429 busy or 503 warming up',
			},
		],
	},
];
