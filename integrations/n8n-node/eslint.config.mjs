import { config } from '@n8n/node-cli/eslint';

// n8n's default rules, every code rule on (n8n Cloud's included), less three about
// publication metadata that are the maintainers' call, not the code's: n8n's verification
// asks for the MIT license (this repository is Apache-2.0) and an author with an email
// address. package.json's "strict" is false only because strict mode forbids any change
// to this file.
export default [
	...config,
	{
		files: ['package.json'],
		rules: {
			'@n8n/community-nodes/valid-author': 'off',
			'n8n-nodes-base/community-package-json-author-missing': 'off',
			'n8n-nodes-base/community-package-json-license-not-default': 'off',
		},
	},
];
