# The container registry the event bridge image is built into (`az acr build`), and AcrPull for the
# cluster's kubelet identity so the bridge Deployment can pull it. Admin user off.

resource "azurerm_container_registry" "bridge" {
  name                = substr("${var.name_prefix}acr${local.suffix}", 0, 50)
  resource_group_name = azurerm_resource_group.app.name
  location            = azurerm_resource_group.app.location
  sku                 = "Basic"
  admin_enabled       = false
  tags                = local.tags
}

resource "azurerm_role_assignment" "kubelet_acr_pull" {
  scope              = azurerm_container_registry.bridge.id
  role_definition_id = "${local.role_definition_prefix}${local.built_in_roles["AcrPull"]}"
  principal_id       = data.azurerm_kubernetes_cluster.target.kubelet_identity[0].object_id
  principal_type     = "ServicePrincipal"
}
