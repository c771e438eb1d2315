import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { ERROR_RESPONSES, listOf, ref } from '../schemas.js';

/**
 * What the gateway offers its clients, for the dashboard's allow-list picker and its ready-to-paste
 * snippets: the models of the providers file and the public address of the proxies. Any signed-in
 * account may read them; neither names a credential.
 */
export function registerGatewayRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get(
    '/v1/models',
    {
      schema: {
        tags: ['gateway'],
        summary: 'The models the gateway serves (from the providers file), each with the providers that serve it',
        response: { 200: listOf('ServedModel'), ...ERROR_RESPONSES },
      },
    },
    async () => ({ data: ctx.servedModels }),
  );

  app.get(
    '/v1/gateway',
    {
      schema: {
        tags: ['gateway'],
        summary: "The gateway's public address, for client configuration",
        response: { 200: ref('GatewayInfo'), ...ERROR_RESPONSES },
      },
    },
    async () => ({ public_url: ctx.config.publicGatewayUrl.replace(/\/+$/, '') }),
  );
}
