import type {
	IAuthenticateGeneric,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

export class SiftApi implements ICredentialType {
	name = 'siftApi';

	displayName = 'Sift API';

	icon = { light: 'file:../icons/sift.svg', dark: 'file:../icons/sift.dark.svg' } as const;

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-sift#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: 'http://127.0.0.1:8000',
			placeholder: 'http://127.0.0.1:8000',
			description: 'Where `sift serve` listens, without a trailing path',
			required: true,
		},
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description: 'One of the keys in SIFT_SERVER_API_KEYS or the keys file of the server',
			required: true,
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: {
				Authorization: '=Bearer {{$credentials.apiKey}}',
			},
		},
	};

	// Lists the collections this key may use: a wrong key answers 403, a wrong URL does
	// not answer at all.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}',
			url: '/v1/collections',
		},
	};
}
