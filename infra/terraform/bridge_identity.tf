# The event bridge's identity, trusted for the bridge's ServiceAccount through Microsoft Entra Workload ID
# (infra/k8s/bridge/serviceaccount.yaml carries its client ID). The bridge holds no secret.

resource "azurerm_user_assigned_identity" "bridge" {
  name                = "${var.name_prefix}-bridge-id"
  resource_group_name = azurerm_resource_group.app.name
  location            = azurerm_resource_group.app.location
  tags                = local.tags
}

resource "azurerm_federated_identity_credential" "bridge" {
  name                      = "event-bridge"
  user_assigned_identity_id = azurerm_user_assigned_identity.bridge.id
  issuer                    = data.azurerm_kubernetes_cluster.target.oidc_issuer_url
  subject                   = "system:serviceaccount:${var.bridge_service_account_namespace}:${var.bridge_service_account_name}"
  audience                  = ["api://AzureADTokenExchange"]
}
