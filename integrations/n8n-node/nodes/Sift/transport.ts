import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError, sleep } from 'n8n-workflow';

// sift's error codes (integrations/http/_errors.py): Dify's 1001/1002/2001, then its own.
const BAD_AUTH_HEADER = 1001;
const AUTH_FAILED = 1002;
const UNKNOWN_COLLECTION = 2001;
const DOCUMENT_NOT_FOUND = 4004;
const NOT_READY = 5031;
const DEADLINE_EXCEEDED = 5040;

// Answers worth another try after the server's Retry-After: warming up, busy, a model
// server briefly away. A deadline overrun (5040) is not retried: it would double the wait.
const RETRIED = new Set([429, 503]);
const MAX_ATTEMPTS = 4;
const MAX_WAIT_S = 30;

interface Answer {
	statusCode: number;
	headers: IDataObject;
	body: unknown;
}

export interface SiftRequest {
	method: IHttpRequestMethods;
	path: string;
	body?: IDataObject;
	qs?: IDataObject;
	/** Seconds the call may take (the search deadline plus a margin). */
	timeoutS: number;
	/** What the call is about, for messages: "collection 'docs'", "document 'a' in 'docs'". */
	subject: string;
	retry: boolean;
}

function errorBody(body: unknown): { code?: number; message: string } {
	if (body && typeof body === 'object') {
		const data = body as IDataObject;
		const code = typeof data.error_code === 'number' ? data.error_code : undefined;
		const message = typeof data.error_msg === 'string' ? data.error_msg : JSON.stringify(data);
		return { code, message };
	}
	return { message: typeof body === 'string' ? body.slice(0, 500) : '' };
}

function retryAfter(headers: IDataObject): number {
	const raw = headers['retry-after'] ?? headers['Retry-After'];
	const seconds = Number(Array.isArray(raw) ? raw[0] : raw);
	return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, MAX_WAIT_S) : 2;
}

/** The n8n error for a sift error answer: what was wrong, and what to do about it. */
function apiError(
	ctx: IExecuteFunctions,
	request: SiftRequest,
	answer: Answer,
	itemIndex: number,
	attempts: number,
): NodeApiError {
	const { code, message } = errorBody(answer.body);
	const status = answer.statusCode;
	let title: string;
	let description: string;
	if (status === 401 || code === BAD_AUTH_HEADER || code === AUTH_FAILED) {
		title = message.includes('may not use')
			? `This API key may not use ${request.subject}`
			: 'sift refused the API key';
		description =
			'Check the API key of the Sift API credential: it must be one of the keys the server ' +
			`was started with (SIFT_SERVER_API_KEYS or its keys file). sift said: ${message}`;
	} else if (code === UNKNOWN_COLLECTION) {
		title = `Unknown collection: ${request.subject}`;
		description = `sift said: ${message}. The collections this key may use are listed at GET /v1/collections.`;
	} else if (code === DOCUMENT_NOT_FOUND) {
		title = `No such document: ${request.subject}`;
		description = `sift said: ${message}. Document ids are the doc_id of search results.`;
	} else if (code === NOT_READY) {
		title = 'sift is still warming up';
		description = `It was still opening its collections after ${attempts} attempt(s); retry in a moment. sift said: ${message}`;
	} else if (code === DEADLINE_EXCEEDED) {
		title = 'The search did not finish within its deadline';
		description = `sift said: ${message}. Raise the deadline option, or lower Max Turns.`;
	} else if (status === 429) {
		title = 'sift is busy (every search slot taken)';
		description = `Still busy after ${attempts} attempt(s). sift said: ${message}`;
	} else if (status === 422 || status === 400) {
		title = `sift refused the request: ${message}`;
		description = 'One of the node parameters is not valid; the message names it.';
	} else {
		title = `sift answered ${status}: ${message}`;
		description = `Calling ${request.method} ${request.path}.`;
	}
	return new NodeApiError(
		ctx.getNode(),
		{ error_code: code ?? status, error_msg: message } as JsonObject,
		{ message: title, description, httpCode: String(status), itemIndex },
	);
}

async function baseUrl(ctx: IExecuteFunctions): Promise<string> {
	const credentials = await ctx.getCredentials('siftApi');
	return String(credentials.baseUrl ?? '').replace(/\/+$/, '');
}

/** Calls sift with the credential's key; an error answer becomes an n8n error. */
export async function siftRequest(
	ctx: IExecuteFunctions,
	request: SiftRequest,
	itemIndex: number,
): Promise<IDataObject> {
	const base = await baseUrl(ctx);
	const options: IHttpRequestOptions = {
		method: request.method,
		baseURL: base,
		url: request.path,
		body: request.body,
		qs: request.qs,
		json: true,
		timeout: Math.ceil(request.timeoutS * 1000),
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
	};
	for (let attempt = 1; ; attempt++) {
		let answer: Answer;
		try {
			answer = (await ctx.helpers.httpRequestWithAuthentication.call(
				ctx,
				'siftApi',
				options,
			)) as Answer;
		} catch (error) {
			const reason = (error as Error).message ?? String(error);
			throw new NodeOperationError(ctx.getNode(), `Could not reach sift at ${base}: ${reason}`, {
				itemIndex,
				description:
					'Check the Base URL of the Sift API credential and that `sift serve` is running there.' +
					` The call was allowed ${request.timeoutS} s.`,
			});
		}
		if (answer.statusCode < 300) {
			return answer.body as IDataObject;
		}
		const { code } = errorBody(answer.body);
		if (
			request.retry &&
			RETRIED.has(answer.statusCode) &&
			code !== DEADLINE_EXCEEDED &&
			attempt < MAX_ATTEMPTS
		) {
			await sleep(retryAfter(answer.headers ?? {}) * 1000);
			continue;
		}
		throw apiError(ctx, request, answer, itemIndex, attempt);
	}
}
