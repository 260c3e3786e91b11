output "app_resource_group_name" {
  description = "Resource group of the app."
  value       = azurerm_resource_group.app.name
}

output "function_app_name" {
  description = "Function App name (for `func azure functionapp publish` or zip deploy)."
  value       = azurerm_function_app_flex_consumption.app.name
}

output "function_principal_id" {
  description = "Object (principal) ID of the app identity: the Kubernetes RBAC subject when kubernetes_authorization is KubernetesRBAC."
  value       = azurerm_user_assigned_identity.function.principal_id
}

output "bridge_identity_client_id" {
  description = "Client ID for the bridge ServiceAccount annotation azure.workload.identity/client-id."
  value       = azurerm_user_assigned_identity.bridge.client_id
}

output "bridge_queue_service_url" {
  description = "BRIDGE_QUEUE_SERVICE_URL for the bridge ConfigMap."
  value       = azurerm_storage_account.app.primary_queue_endpoint
}

output "bridge_queue_name" {
  description = "BRIDGE_QUEUE_NAME for the bridge ConfigMap."
  value       = azurerm_storage_queue.events.name
}

output "app_insights_name" {
  description = "Application Insights component that holds the metric records."
  value       = azurerm_application_insights.app.name
}

output "bridge_registry_name" {
  description = "Container registry the event bridge image is built into (az acr build)."
  value       = azurerm_container_registry.bridge.name
}

output "bridge_registry_login_server" {
  description = "Login server of that registry: the bridge image is <loginServer>/nodeclaim-event-bridge:<tag>."
  value       = azurerm_container_registry.bridge.login_server
}

output "kubernetes_authorization" {
  description = "kubernetes_authorization as deployed: KubernetesRBAC means infra/k8s/functions must be applied."
  value       = var.kubernetes_authorization
}

output "aks_cluster_name" {
  description = "The AKS cluster the app manages, for the deploy hooks."
  value       = var.aks_cluster_name
}

output "aks_cluster_resource_group_name" {
  description = "Its resource group."
  value       = var.aks_cluster_resource_group_name
}

output "cluster_name" {
  description = "CLUSTER_NAME, for the bridge ConfigMap."
  value       = var.cluster_name
}

output "durable_backend" {
  description = "durable_backend as deployed: AzureStorage or DurableTaskScheduler."
  value       = var.durable_backend
}
