from typing import Any

from dify_plugin import ToolProvider
from dify_plugin.errors.tool import ToolProviderCredentialValidationError
from sift_api import SiftApiError, SiftClient


class SiftProvider(ToolProvider):
    def _validate_credentials(self, credentials: dict[str, Any]) -> None:
        """Lists the collections the key may use: a wrong key or an unreachable server
        fails here, with sift's own message."""
        try:
            SiftClient.of(credentials, retry=False).collections()
        except SiftApiError as exc:
            raise ToolProviderCredentialValidationError(str(exc)) from None
