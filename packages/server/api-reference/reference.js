// Starts Swagger UI (swagger-ui-dist, served by this server) on the document named by the page's configuration.
/* global SwaggerUIBundle */
const configuration = JSON.parse(document.getElementById('reference-configuration').textContent);
window.ui = SwaggerUIBundle({
  ...configuration,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
